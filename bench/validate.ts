/**
 * In-process benchmark of the compliance rules: the full sample invoice and a generated 500-line
 * invoice, validated repeatedly; prints the median and p99 time per invoice.
 *   npm run bench:validate
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { validateInvoice } from "../src/documents/validation/validation.ts";
import { withLineTotals } from "../test/documents/line-totals.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const shared = path.resolve(process.env.EINVOICE_SHARED_DIR ?? path.join(root, "..", "shared"));
const business = { id: "5b7d3d2e-8f7a-4c1e-9b1a-2f8e6c4d1a00", service_id: "AB12CD34" };

function load(name: string): Record<string, unknown> {
  const text = fs
    .readFileSync(path.join(shared, "fixtures", `${name}.json`), "utf8")
    .replaceAll("{{BUSINESS_ID}}", business.id)
    .replaceAll("{{SERVICE_ID}}", business.service_id);
  return JSON.parse(text) as Record<string, unknown>;
}

/** The full fixture with `count` lines whose amounts, taxes and totals all add up. */
function manyLines(count: number): Record<string, unknown> {
  const doc = load("invoice-full");
  const template = (doc.invoice_line as Record<string, unknown>[])[0] as Record<string, unknown>;
  const lines = Array.from({ length: count }, (_, i) => {
    const quantity = 1 + (i % 7);
    const price = 100 + i;
    return {
      ...template,
      discount_rate: 0,
      discount_amount: 0,
      fee_rate: 0,
      fee_amount: 0,
      invoiced_quantity: quantity,
      line_extension_amount: quantity * price,
      price: { price_amount: price, base_quantity: 1, price_unit: "NGN per bag" },
    };
  });
  return withLineTotals(doc, lines);
}

function measure(label: string, doc: Record<string, unknown>, iterations: number) {
  const ctx = { business };
  const first = validateInvoice(doc, ctx);
  if (first.errors.length > 0)
    throw new Error(`${label} is not valid: ${JSON.stringify(first.errors.slice(0, 3))}`);
  for (let i = 0; i < Math.min(iterations, 200); i++) validateInvoice(doc, ctx);
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    validateInvoice(doc, ctx);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  samples.sort((x, y) => x - y);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] as number;
  console.log(
    `${label.padEnd(28)} median ${at(0.5).toFixed(4)} ms   p99 ${at(0.99).toFixed(4)} ms   (${iterations} runs)`,
  );
}

console.log(`node ${process.version}, ${os.cpus()[0]?.model ?? "unknown cpu"} × ${os.cpus().length}`);
measure("invoice-full.json", load("invoice-full"), 20_000);
measure("generated, 500 lines", manyLines(500), 1_000);
