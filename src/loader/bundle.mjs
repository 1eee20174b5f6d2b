import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";

/**
 * The TypeScript sources as one ES module, built with esbuild, for a process or a thread to start
 * from instead of loading each file through a TypeScript loader.
 *
 * Plain JavaScript, so that bin/einvoice.js can use it before anything can load TypeScript. Node 20
 * loads TypeScript only through a loader's hooks (tsx), which see each of a process's hundreds of
 * modules one at a time: about 2.4 s of CPU for a process that builds one app, against 1 s from
 * one bundle. The code is the sources' own: esbuild only strips the types, as tsx does (tsx is
 * esbuild too), with the same tsconfig.json.
 *
 * - Each source file's `import.meta.url` is its own file's URL, as it is when the file is loaded
 *   itself, so what a module finds beside itself it still finds. It is replaced by esbuild's
 *   `define`, where it is an expression: not where the words are in a string or a comment.
 * - Packages are imported from where they are installed, by absolute URL, resolved by Node itself
 *   (`import.meta.resolve`: its conditions, not a bundler's), unless `inPlace` says to bundle them
 *   (for a thread, which then loads a few files instead of hundreds): then only those listed stay
 *   outside, the packages that read files installed beside their code (a native addon, fonts,
 *   WebAssembly).
 * - A module for a `data:` URL names itself by its entry in stack traces (sourceURL); with
 *   `sourcemap`, the frames of a file's module are the sources' own files and lines once source
 *   maps are enabled, as tsx enables them.
 *
 * @param {object} options
 * @param {string} options.contents the entry's code (JavaScript), importing what the bundle holds
 * @param {string} options.resolveDir the folder the entry's relative imports start from
 * @param {string} options.name the URL stack traces name the bundle by
 * @param {string[]} [options.inPlace] bundle the packages too, but for these
 * @param {string} [options.outfile] where the module will be written, for its source map's paths
 * @param {string} [options.prologue] code the module runs first, once its imports have run
 * @param {boolean} [options.sourcemap] map the bundle's lines to the sources' (inline)
 * @returns {Promise<string>} the module's code
 */
export async function bundle(options) {
  const cached = await cachedBundle(options);
  if (cached) return cached.code ?? (await readFile(cached.file, "utf8"));
  return (await build(options)).code;
}

let building = 0;

/**
 * The packages a bundle that holds its packages still imports from where they are installed: each
 * reads files installed beside its code (a native addon, fonts, WebAssembly, static files, its own
 * package.json), runs a file of its own in a thread or a process, or requires an optional package
 * only when asked (pg-native).
 */
export const IN_PLACE = [
  "better-sqlite3",
  "pdfkit",
  "fontkit",
  "zxing-wasm",
  "dejavu-fonts-ttf",
  "libxml2-wasm",
  "esbuild",
  "tsx",
  "pg",
  "pino",
  "@fastify/swagger",
  "@fastify/swagger-ui",
];

/**
 * Builds with esbuild.
 * @param {Parameters<typeof bundle>[0]} options
 * @returns {Promise<{ code: string, inputs: string[] }>} the module's code and the files it was built from
 */
async function build(options) {
  building += 1;
  try {
    return await esbuildOnce(options);
  } finally {
    building -= 1;
    // esbuild answers from a process of its own (57 MB), which would otherwise live as long as this
    // one: a server's bundles are built as it starts and as its pools start their first threads.
    // The next build starts another.
    if (building === 0) void esbuild.stop();
  }
}

/** @param {Parameters<typeof bundle>[0]} options */
async function esbuildOnce(options) {
  const { contents, resolveDir, name, inPlace, outfile, prologue = "", sourcemap = false } = options;
  const result = await esbuild.build({
    metafile: true,
    stdin: { contents, resolveDir, loader: "js" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    ...(outfile ? { outfile } : {}),
    // No keepNames: it wraps every function made at run time in a call that sets its name (3.7% of
    // a sign's event loop, closures in the validation rules and in Fastify's hooks). Names are only
    // changed where two modules' would collide (`check2`); nothing reads a function's name.
    logLevel: "silent",
    sourcemap: sourcemap ? "inline" : false,
    sourcesContent: false,
    // The CommonJS packages bundled call `require` for Node's own modules.
    banner: {
      js: [
        inPlace
          ? `import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(${JSON.stringify(name)});`
          : "",
        prologue,
      ].join("\n"),
    },
    plugins: [
      {
        name: "sources",
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.pluginData === "in-place" || args.path.startsWith("node:")) return undefined;
            if (!inPlace) {
              if (args.kind !== "import-statement" && args.kind !== "dynamic-import") return undefined;
              return { path: import.meta.resolve(args.path), external: true };
            }
            if (!inPlace.includes(packageName(args.path))) return undefined;
            const found = await build.resolve(args.path, {
              kind: args.kind,
              resolveDir: args.resolveDir,
              pluginData: "in-place",
            });
            if (found.errors.length > 0) return { errors: found.errors };
            // An import takes a URL; a CommonJS `require` of the bundle (fastify's of pino) a path.
            const imported = args.kind === "import-statement" || args.kind === "dynamic-import";
            return { path: imported ? pathToFileURL(found.path).href : found.path, external: true };
          });
          build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
            const source = await readFile(args.path, "utf8");
            const loader = /\.[cm]?ts$/.test(args.path) ? "ts" : "js";
            // Read once, here: esbuild takes the text as read, with the settings of its path.
            if (!source.includes("import.meta")) return { contents: source, loader };
            const { code } = await esbuild.transform(source, {
              loader,
              target: "node20",
              define: { "import.meta.url": JSON.stringify(pathToFileURL(args.path).href) },
              tsconfigRaw: await readTsconfig(),
              sourcemap: sourcemap ? "inline" : false,
              sourcefile: args.path,
            });
            return { contents: code, loader: "js" };
          });
        },
      },
    ],
  });
  const output = result.outputFiles?.[0];
  if (!output) throw new Error(`esbuild wrote no bundle for ${name}`);
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .filter((input) => input !== "<stdin>" && !input.includes(":"))
    .map((input) => path.resolve(input));
  // A `data:` URL's module is named in stack traces by its entry, not by the whole URL (a megabyte
  // in each frame); a file is named by itself.
  const code = outfile ? output.text : `${output.text}\n//# sourceURL=${name}\n`;
  // The packages a bundle imports where they are installed are found by path as it is built: an
  // install (which rewrites the lockfile) may move them. This file is an input too: it says how
  // the bundle is built.
  return { code, inputs: [...inputs, TSCONFIG, PACKAGE_LOCK, fileURLToPath(import.meta.url)] };
}

/**
 * The `data:` URL of a module's code, to import or to start a thread from.
 * @param {string} code
 */
export function dataUrl(code) {
  return new URL(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}

/**
 * Runs a module from its bundle, with source maps, as tsx would run it: stack traces name the
 * sources' files and lines. `contents` is the entry's code, which imports the sources (the CLI's
 * entry, say, or a group of test files).
 *
 * The bundle is a file, not a `data:` URL, because Node maps the frames of a file's module only: the
 * cache's (cachedBundle). Without a cache to write to, it is written to a folder of this process's
 * own (mkdtemp: no other user's file is ever run), which the module removes as the first thing it
 * runs: by then it is loaded and its source map read, and it imports nothing by a path relative to
 * itself. A process killed before that leaves the folder.
 *
 * @param {object} entry
 * @param {string} entry.contents
 * @param {string} entry.resolveDir the folder the entry's relative imports start from
 * @param {string} entry.label the bundle's file name, without its extension
 * @param {string[]} [entry.inPlace] bundle the packages too, but for these
 */
export async function runBundled({ contents, resolveDir, label, inPlace }) {
  const cached = await cachedBundle({
    contents,
    resolveDir,
    label,
    sourcemap: true,
    ...(inPlace ? { inPlace } : {}),
  });
  if (cached) {
    process.setSourceMapsEnabled(true);
    await import(pathToFileURL(cached.file).href);
    return;
  }
  // No cache to write to (a read-only installation): built for this process alone.
  const dir = await mkdtemp(path.join(os.tmpdir(), "einvoice-"));
  try {
    const file = path.join(dir, `${label}.mjs`);
    const { code } = await build({
      contents,
      resolveDir,
      name: pathToFileURL(file).href,
      outfile: file,
      prologue: `(await import("node:fs")).rmSync(${JSON.stringify(dir)}, { recursive: true, force: true });`,
      sourcemap: true,
      ...(inPlace ? { inPlace } : {}),
    });
    await writeFile(file, code, { mode: 0o600 });
    process.setSourceMapsEnabled(true);
    await import(pathToFileURL(file).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The TypeScript settings esbuild applies to the files it loads itself (it reads the nearest
 * tsconfig.json), for those transformed here: none where the service runs without one, as under tsx.
 * @type {Promise<{ compilerOptions?: object }> | undefined}
 */
let tsconfig;
const TSCONFIG = fileURLToPath(new URL("../../tsconfig.json", import.meta.url));
const PACKAGE_LOCK = fileURLToPath(new URL("../../package-lock.json", import.meta.url));
const readTsconfig = () =>
  (tsconfig ??= readFile(TSCONFIG, "utf8").then(
    (text) => ({ compilerOptions: JSON.parse(text).compilerOptions ?? {} }),
    () => ({}),
  ));

/**
 * `@scope/name` or `name` of a bare specifier.
 * @param {string} specifier
 */
function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

/**
 * Bundles kept between processes, in the installation's `node_modules/.cache`: every process of a
 * server, each of its workers and each test process starts from the same few bundles, and building
 * one (about 0.4 s of esbuild, 1.6 s with the packages bundled in) is paid once per change of the
 * sources instead of at each start. An entry is keyed by what was asked (the entry's code, the
 * options, Node's and esbuild's versions) and holds the files it was built from, each with its
 * modification time and size: an entry whose files all still have theirs is used, else it is built
 * again. An entry whose files changed while it was being built is not kept. Written under a
 * temporary name and renamed into place, so that processes starting at once never read half of
 * one; the most recently used entries are kept (MAX_ENTRIES).
 *
 * Where the folder cannot be written (an installation mounted read-only), each process builds its
 * own, as before.
 */
const CACHE_DIR = fileURLToPath(new URL("../../node_modules/.cache/einvoice-bundles/", import.meta.url));
const MAX_ENTRIES = 100;

/**
 * The cached bundle for `options`, built if need be: its file (whose URL is its name when `label` is
 * given), and its code when it was just built. Undefined when there is no cache to keep it in.
 * @param {Omit<Parameters<typeof bundle>[0], "name"> & { name?: string, label?: string }} options
 * @returns {Promise<{ code?: string, file: string } | undefined>}
 */
async function cachedBundle(options) {
  const { label = "bundle", ...asked } = options;
  const key = createHash("sha256")
    .update(JSON.stringify({ asked, label, node: process.version, esbuild: esbuild.version }))
    .digest("hex")
    .slice(0, 32);
  const file = path.join(CACHE_DIR, `${label}-${key}.mjs`);
  const manifest = `${file}.inputs.json`;
  try {
    const inputs = JSON.parse(await readFile(manifest, "utf8"));
    if (await unchanged(inputs)) {
      const now = new Date();
      await utimes(manifest, now, now).catch(() => {});
      // Its code is read only by a caller that wants it as text: a process imports the file itself.
      return { file };
    }
  } catch {
    // Not cached yet, or cached from files that changed since.
  }
  try {
    await mkdir(CACHE_DIR, { recursive: true });
  } catch {
    return undefined;
  }
  const started = Date.now();
  const built = await build({
    ...asked,
    ...(asked.name === undefined ? { outfile: file } : {}),
    name: asked.name ?? pathToFileURL(file).href,
  });
  /** @type {[string, number, number][]} */
  const inputs = await Promise.all(
    built.inputs.map(async (input) => {
      const info = await stat(input).catch(() => undefined);
      return /** @type {[string, number, number]} */ (
        info ? [input, info.mtimeMs, info.size] : [input, -1, -1]
      );
    }),
  );
  try {
    const temporary = `.${process.pid}-${Math.random().toString(36).slice(2)}`;
    await writeFile(`${file}${temporary}`, built.code, { mode: 0o644 });
    await rename(`${file}${temporary}`, file);
    // A file changed after the build began may not be what was built: the bundle is this process's
    // (its name stays the cache's), but the next process builds it again.
    if (inputs.some(([, mtimeMs]) => mtimeMs >= started)) return { code: built.code, file };
    await writeFile(`${manifest}${temporary}`, JSON.stringify(inputs));
    await rename(`${manifest}${temporary}`, manifest);
    await prune();
  } catch {
    return undefined;
  }
  return { code: built.code, file };
}

/** @param {[string, number, number][]} inputs */
async function unchanged(inputs) {
  const now = await Promise.all(inputs.map(([input]) => stat(input).catch(() => undefined)));
  // A file missing when the bundle was built (-1: a lockfile an installation came without) must
  // still be missing.
  return inputs.every(([, mtimeMs, size], i) => {
    const info = now[i];
    return info === undefined ? mtimeMs === -1 : info.mtimeMs === mtimeMs && info.size === size;
  });
}

/** Keeps the MAX_ENTRIES entries last used, and no stray temporary file older than an hour. */
async function prune() {
  const names = await readdir(CACHE_DIR);
  const entries = [];
  for (const name of names) {
    const full = path.join(CACHE_DIR, name);
    const info = await stat(full).catch(() => undefined);
    if (!info) continue;
    if (name.endsWith(".inputs.json")) entries.push({ full, used: info.mtimeMs });
    else if (!name.endsWith(".mjs") && Date.now() - info.mtimeMs > 3_600_000) await rm(full, { force: true });
  }
  entries.sort((a, b) => b.used - a.used);
  for (const { full } of entries.slice(MAX_ENTRIES)) {
    await rm(full, { force: true });
    await rm(full.slice(0, -".inputs.json".length), { force: true });
  }
}
