/*
 * `node test/launch.mjs FILE…`: test files run from one bundle of them and the sources they import
 * (src/loader/bundle.mjs), as scripts/test.mjs runs each test process. Loaded through tsx instead
 * (`node --import tsx FILE`, which works too), each of a process's hundreds of modules passes
 * through the loader's hooks one at a time: about 2.4 s more of CPU per process, some 75 processes
 * a run.
 *
 * One file runs as itself. Several run one after the other, each as a suite named by its path, so
 * that loading the service (a second or two of each process's start, more than many of these files
 * take) is paid once: test/helpers.ts is imported first, so that its hook, which drops this
 * process's PostgreSQL database, is the root's and runs after every file, not after the first that
 * imports it. A file's imports run when its suite starts, as its own process would run them.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runBundled } from "../src/loader/bundle.mjs";

const ROOT = path.resolve(fileURLToPath(new URL(".", import.meta.url)), "..");
const files = process.argv.slice(2);
/** @param {string} file */
const at = (file) => JSON.stringify(path.resolve(file));
const [first = ""] = files;

const contents =
  files.length === 1
    ? `import ${at(first)};`
    : [
        `import ${at(path.join(ROOT, "test", "helpers.ts"))};`,
        `import { describe } from "node:test";`,
        ...files.map(
          (file) => `describe(${JSON.stringify(file)}, async () => { await import(${at(file)}); });`,
        ),
      ].join("\n");

await runBundled({
  contents,
  resolveDir: process.cwd(),
  label: files.length === 1 ? path.basename(first, ".ts") : "group",
});
