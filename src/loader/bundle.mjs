import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
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
  building += 1;
  try {
    return await build(options);
  } finally {
    building -= 1;
    // esbuild answers from a process of its own (57 MB), which would otherwise live as long as this
    // one: a server's bundles are built as it starts and as its pools start their first threads.
    // The next build starts another.
    if (building === 0) void esbuild.stop();
  }
}

let building = 0;

/** @param {Parameters<typeof bundle>[0]} options */
async function build(options) {
  const { contents, resolveDir, name, inPlace, outfile, prologue = "", sourcemap = false } = options;
  const result = await esbuild.build({
    stdin: { contents, resolveDir, loader: "js" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    ...(outfile ? { outfile } : {}),
    // Error names and stack frames read as in the sources.
    keepNames: true,
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
            return { path: pathToFileURL(found.path).href, external: true };
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
  // A `data:` URL's module is named in stack traces by its entry, not by the whole URL (a megabyte
  // in each frame); a file is named by itself.
  return outfile ? output.text : `${output.text}\n//# sourceURL=${name}\n`;
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
 * The bundle is a file, not a `data:` URL, because Node maps the frames of a file's module only. It
 * is written to a folder of this process's own (mkdtemp: no other user's file is ever run), which
 * the module removes as the first thing it runs: by then it is loaded and its source map read, and
 * it imports nothing by a path relative to itself. A process killed before that leaves the folder.
 *
 * @param {object} entry
 * @param {string} entry.contents
 * @param {string} entry.resolveDir the folder the entry's relative imports start from
 * @param {string} entry.label the bundle's file name, without its extension
 */
export async function runBundled({ contents, resolveDir, label }) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "einvoice-"));
  try {
    const file = path.join(dir, `${label}.mjs`);
    const code = await bundle({
      contents,
      resolveDir,
      name: pathToFileURL(file).href,
      outfile: file,
      prologue: `(await import("node:fs")).rmSync(${JSON.stringify(dir)}, { recursive: true, force: true });`,
      sourcemap: true,
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
const readTsconfig = () =>
  (tsconfig ??= readFile(new URL("../../tsconfig.json", import.meta.url), "utf8").then(
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
