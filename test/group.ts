/*
 * Several test files in one process, each as a suite named by its path, one after the other:
 * scripts/test.mjs runs the files of its lighter layers this way, so that loading the service (a
 * second or two of each process's start, more than many of these files take) is paid once a group.
 */
import path from "node:path";
import { describe } from "node:test";
import { pathToFileURL } from "node:url";
// Imported here first, so that its hook, which drops this process's PostgreSQL database, is the
// root's: it runs after every file, not after the first that imports it.
import "./helpers.ts";

for (const file of process.argv.slice(2)) {
  describe(file, async () => {
    await import(pathToFileURL(path.resolve(file)).href);
  });
}
