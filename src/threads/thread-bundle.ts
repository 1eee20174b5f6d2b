import { fileURLToPath } from "node:url";
import { bundle, dataUrl, IN_PLACE } from "../loader/bundle.mjs";

/**
 * A pool's thread module as one ES module, built once per process (src/loader/bundle.mjs), which
 * the threads start from.
 *
 * A worker thread does not inherit the TypeScript loader of its process. Registering tsx in each
 * thread (as was done) gave every thread a loader thread of its own and sent each of its hundreds
 * of modules through it: about 1.1 s of CPU before the preparation thread could take a job, 0.3 s
 * for a module that imports nothing. From one bundle the same thread is ready in about 0.08 s.
 * That cost is paid each time a pool starts or replaces a thread (a stuck QR decoding, a PDF that
 * outgrew its heap), and by every process and app the test suite starts.
 *
 * The bundle holds the thread's packages too (esbuild keeps only what is used: typebox's hundreds
 * of files are a few), except those in IN_PLACE, which read files installed beside their code
 * (a native addon, fonts, WebAssembly): they are imported from where they are installed.
 */

const THREAD_MAIN = fileURLToPath(new URL("./thread-main.ts", import.meta.url));

/**
 * The process's Node options for its threads, less the module loaders (`--import tsx`, say): the
 * bundle needs none, and each would start a loader thread of its own.
 */
export const THREAD_EXEC_ARGV = withoutLoaders(process.execArgv);

export function withoutLoaders(argv: string[]): string[] {
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

const building = new Map<string, Promise<URL>>();
const built = new Map<string, URL>();

/** The `data:` URL of the bundle for `entry` (a module whose default export is a ThreadMain). */
export function threadModule(entry: URL): Promise<URL> {
  return once(`${entry.href}?thread-bundle`, () => [
    `import main from ${JSON.stringify(fileURLToPath(entry))};`,
    `import { serveThread } from ${JSON.stringify(THREAD_MAIN)};`,
    "await serveThread(main);",
  ]);
}

/**
 * The bundle of `entry` alone, for a pool that runs it in place (one core): a process started
 * from a bundle has no loader to import a .ts file with, and in place the module is the same code
 * as on a thread, with the same state of its own.
 */
export function inPlaceModule(entry: URL): Promise<URL> {
  return once(`${entry.href}?in-place-bundle`, () => [
    `export { default } from ${JSON.stringify(fileURLToPath(entry))};`,
  ]);
}

/** The bundle for `entry` if this process has built it already: another pool's threads start at once. */
export function builtThreadModule(entry: URL): URL | undefined {
  return built.get(`${entry.href}?thread-bundle`);
}

/** Each bundle is built once per process; a failed build is tried again by the next to ask. */
function once(name: string, entry: () => string[]): Promise<URL> {
  let module = building.get(name);
  if (!module) {
    const url = new URL(name);
    module = bundle({
      contents: entry().join("\n"),
      resolveDir: fileURLToPath(new URL(".", url)),
      name,
      inPlace: IN_PLACE,
    }).then(dataUrl);
    building.set(name, module);
    module.then(
      (url) => built.set(name, url),
      () => building.delete(name),
    );
  }
  return module;
}
