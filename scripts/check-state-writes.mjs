#!/usr/bin/env node
// The invoice lifecycle owns every move of an invoice, checked on every `npm run check`:
// - the invoice repository's methods that write an invoice's state (its status or its payment
//   status) are called from src/invoices/lifecycle.ts alone;
// - SQL that inserts or updates invoice rows is written in src/invoices/invoice-repository.ts alone
//   (and in the migrations, which move every row at once and are not a move of one invoice).
// A move made elsewhere would skip what the lifecycle writes with it (the history entry, the
// webhook notice, the delivery or the message to the authority).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const SRC = "src";
const LIFECYCLE = path.join(SRC, "invoices", "lifecycle.ts");
const REPOSITORY = path.join(SRC, "invoices", "invoice-repository.ts");
const STATE_WRITES = /\.(inserts|setStatus|changeStatusIf|changePaymentIf)\s*\(/g;
const INVOICE_SQL = /\b(updateTable|insertInto)\(\s*["']invoices["']\s*\)/g;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return /\.(ts|mjs)$/.test(name) && !name.endsWith(".d.ts") ? [full] : [];
  });
}

const lineOf = (text, index) => text.slice(0, index).split("\n").length;
const found = [];
for (const file of files(SRC)) {
  const text = readFileSync(file, "utf8");
  const migration = file.startsWith(path.join(SRC, "db") + path.sep) && /migration/.test(file);
  if (file !== LIFECYCLE && file !== REPOSITORY) {
    for (const m of text.matchAll(STATE_WRITES))
      found.push(
        `${file}:${lineOf(text, m.index)}: ${m[1]}() writes an invoice's state outside the lifecycle`,
      );
  }
  if (file !== REPOSITORY && !migration) {
    for (const m of text.matchAll(INVOICE_SQL))
      found.push(`${file}:${lineOf(text, m.index)}: ${m[1]}("invoices") outside the invoice repository`);
  }
}

for (const f of found) console.error(`state rule broken: ${f}`);
if (found.length > 0) process.exit(1);
console.log("state writes: only the lifecycle moves an invoice");
