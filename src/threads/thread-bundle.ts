import { readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";

/**
 * A pool's thread module as one ES module, built once per process with esbuild, which the threads
 * start from.
 *
 * A worker thread does not inherit the TypeScript loader of its process. Registering tsx in each
 * thread (as was done) gave every thread a loader thread of its own and sent each of its hundreds
 * of modules through it: about 1.1 s of CPU before the preparation thread could take a job, 0.3 s
 * for a module that imports nothing. From one bundle the same thread is ready in about 0.08 s.
 * That cost is paid each time a pool starts or replaces a thread (a stuck QR decoding, a PDF that
 * outgrew its heap), and by every process and app the test suite starts. The code is the same as
 * the sources: esbuild only strips the types, as tsx does.
 *
 * The bundle holds the thread's packages too (esbuild keeps only what is used: typebox's hundreds
 * of files are a few), except those in IN_PLACE, which read files installed beside their code
 * (a native addon, fonts, WebAssembly): they are imported from where they are installed, by
 * absolute URL. Each source file's `import.meta.url` is its own file's URL, as it is under tsx, so
 * what a module finds beside itself it still finds.
 */
const IN_PLACE = ["better-sqlite3", "pdfkit", "zxing-wasm", "dejavu-fonts-ttf"];

const THREAD_MAIN = fileURLToPath(new URL("./thread-main.ts", import.meta.url));

/**
 * The process's Node options for its threads, less the module loaders (`--import tsx`, say, under
 * which the tests run): the bundle needs none, and each would start a loader thread of its own.
 */
export const THREAD_EXEC_ARGV = withoutLoaders(process.execArgv);

function withoutLoaders(argv: string[]): string[] {
  const loaders = /^--(import|require|loader|experimental-loader)(=|$)/;
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const match = loaders.exec(arg);
    if (!match) kept.push(arg);
    else if (match[2] !== "=") i++;
  }
  return kept;
}

/**
 * The TypeScript settings esbuild applies to the files it loads itself (it reads the nearest
 * tsconfig.json), for those loaded here: none where the service runs without one, as under tsx.
 */
let tsconfig: Promise<{ compilerOptions?: object }> | undefined;
const readTsconfig = () =>
  (tsconfig ??= readFile(new URL("../../tsconfig.json", import.meta.url), "utf8").then(
    (text) => ({ compilerOptions: (JSON.parse(text) as { compilerOptions?: object }).compilerOptions ?? {} }),
    () => ({}),
  ));

const building = new Map<string, Promise<URL>>();
const built = new Map<string, URL>();

/** The `data:` URL of the bundle for `entry` (a module whose default export is a ThreadMain). */
export function threadModule(entry: URL): Promise<URL> {
  let module = building.get(entry.href);
  if (!module) {
    module = bundle(entry);
    building.set(entry.href, module);
    module.then(
      (url) => built.set(entry.href, url),
      // A failed build is tried again by the next thread to start.
      () => building.delete(entry.href),
    );
  }
  return module;
}

/** The bundle for `entry` if this process has built it already: another pool's threads start at once. */
export function builtThreadModule(entry: URL): URL | undefined {
  return built.get(entry.href);
}

async function bundle(entry: URL): Promise<URL> {
  const entryPath = fileURLToPath(entry);
  const result = await esbuild.build({
    stdin: {
      contents: [
        `import main from ${JSON.stringify(entryPath)};`,
        `import { serveThread } from ${JSON.stringify(THREAD_MAIN)};`,
        "await serveThread(main);",
      ].join("\n"),
      resolveDir: fileURLToPath(new URL(".", entry)),
      loader: "js",
    },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    // Error names and stack frames read as in the sources.
    keepNames: true,
    logLevel: "silent",
    // The CommonJS packages inside call `require` for Node's own modules.
    banner: {
      js: `import { createRequire as __threadRequire } from "node:module"; const require = __threadRequire(${JSON.stringify(entryPath)});`,
    },
    plugins: [
      {
        name: "in-place",
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.pluginData === "in-place") return undefined;
            const name = packageName(args.path);
            if (!IN_PLACE.includes(name)) return undefined;
            const found = await build.resolve(args.path, {
              kind: args.kind,
              resolveDir: args.resolveDir,
              pluginData: "in-place",
            });
            if (found.errors.length > 0) return { errors: found.errors };
            return { path: pathToFileURL(found.path).href, external: true };
          });
          build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
            const source = await readFile(args.path, "utf8");
            const loader = /\.[cm]?ts$/.test(args.path) ? "ts" : "js";
            // Read once, here: esbuild takes the text as read, with the settings of its path.
            if (!source.includes("import.meta")) return { contents: source, loader };
            // Replaced where it is an expression, not where the words are in a string or a comment.
            const { code } = await esbuild.transform(source, {
              loader,
              target: "node20",
              define: { "import.meta.url": JSON.stringify(pathToFileURL(args.path).href) },
              tsconfigRaw: await readTsconfig(),
            });
            return { contents: code, loader: "js" };
          });
        },
      },
    ],
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild wrote no bundle for the thread module ${entry.href}`);
  // Named in stack traces by its entry, not by the whole `data:` URL (a megabyte in each frame).
  const named = `${output.text}\n//# sourceURL=${entry.href}?thread-bundle\n`;
  return new URL(`data:text/javascript;base64,${Buffer.from(named).toString("base64")}`);
}

/** `@scope/name` or `name` of a bare specifier. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}
