#!/usr/bin/env node
// The layering rules of src/, checked on every `npm run check`:
// - only src/http, the composition root (main.ts, runtime/) and each domain's HTTP edge (its *routes.ts)
//   import from src/http: services, repositories and rules speak in domain terms (src/errors.ts);
// - src/crypto imports no domain: it is a library;
// - src/documents (what an invoice document is: schema, rules, money, PDF, UBL) imports no lifecycle domain
//   (invoices, inbox, reports, dashboard, …): they use it, never the other way;
// - src/transmission imports nothing from src/invoices: deliveries report outcomes through a port;
// - src/outbox imports nothing from src/invoices, src/transmission or src/webhooks: it is the generic
//   job queue they all use (its handlers and reports are given to it);
// - src/simulators imports nothing else of src/: a simulator of an upstream shares no code with the
//   service it is the upstream of, so it cannot agree with the service's mistakes;
// - no cycle between the folders of src/ (each edge of one is named, with an import that makes it).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const SRC = "src";

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return /\.(ts|mjs)$/.test(name) && !name.endsWith(".d.ts") ? [full] : [];
  });
}

/** A file's folder under src/ ("invoices" for src/invoices/rules/x.ts); root files are their own. */
const folderOf = (file) => {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.(ts|mjs)$/, "");
};

// `import … from "x"`, `export … from "x"`, `import "x"` and `import("x")`.
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^"';]*?from\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** What happens to documents: what a document is (src/documents) knows none of it. */
const LIFECYCLE = [
  "invoices",
  "inbox",
  "reports",
  "dashboard",
  "verification",
  "transmission",
  "outbox",
  "webhooks",
  "qr",
];

const found = [];
const edges = new Map();
const examples = new Map();
for (const file of files(SRC)) {
  const text = readFileSync(file, "utf8");
  const from = folderOf(file);
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3];
    if (!spec.startsWith(".")) continue;
    const target = path.normalize(path.join(path.dirname(file), spec));
    if (!target.startsWith(`${SRC}${path.sep}`)) continue;
    const to = folderOf(target);
    const base = path.basename(file);
    if (to === "http" && !["http", "main", "runtime"].includes(from) && !base.endsWith("routes.ts")) {
      found.push(`outside http imports http: ${file} -> ${target}`);
    }
    // Settings (config.ts) and the shared error and turn helpers are no domain.
    if (from === "crypto" && to !== "crypto" && !["config", "errors", "turns"].includes(to)) {
      found.push(`crypto imports a domain: ${file} -> ${target}`);
    }
    if (from === "simulators" && to !== "simulators") {
      found.push(`simulators import the service: ${file} -> ${target}`);
    }
    if (from === "transmission" && to === "invoices") {
      found.push(`transmission imports invoices: ${file} -> ${target}`);
    }
    if (from === "documents" && LIFECYCLE.includes(to)) {
      found.push(`documents imports ${to}: ${file} -> ${target}`);
    }
    if (from === "outbox" && ["invoices", "transmission", "webhooks"].includes(to)) {
      found.push(`outbox imports ${to}: ${file} -> ${target}`);
    }
    // The composition root (main.ts, runtime/) and the CLI wire everything, and a domain's routes.ts is the HTTP edge
    // of its folder (it points into the domain and into http/): none takes part in the folder graph.
    if (from !== to && !["main", "runtime", "cli"].includes(from) && !base.endsWith("routes.ts")) {
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from).add(to);
      if (!examples.has(`${from}>${to}`)) examples.set(`${from}>${to}`, `${file} -> ${target}`);
    }
  }
}

// A folder edge is in a cycle when its target leads back to its source: each such edge is named,
// with one import that makes it, so the list says where to cut.
const reaches = (from, to, seen = new Set()) => {
  if (from === to) return true;
  seen.add(from);
  return [...(edges.get(from) ?? [])].some((next) => !seen.has(next) && reaches(next, to, seen));
};
const cyclic = new Map();
for (const [from, targets] of edges) {
  for (const to of targets)
    if (reaches(to, from)) cyclic.set(`cycle edge: ${from} -> ${to}`, examples.get(`${from}>${to}`));
}
found.push(...cyclic.keys());

const breaches = [...new Set(found)];
for (const b of breaches)
  console.error(`import rule broken: ${b}${cyclic.has(b) ? ` (${cyclic.get(b)})` : ""}`);
if (breaches.length > 0) process.exit(1);
console.log("imports: layering rules hold");
