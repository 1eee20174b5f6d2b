/**
 * In-process benchmark of the buyer's PDF (`renderInvoicePdf`): the full sample invoice and a
 * generated 300-line invoice (the test's: long names, Yorùbá and Hausa names), each rendered
 * after a warm-up, one at a time; the median and p95 of the wall time of each rendering.
 *   npm run bench:pdf [-- --runs 500]
 */
import os from "node:os";
import { renderInvoicePdf } from "../src/documents/pdf/render.ts";
import { fullInvoice, manyLines, pdfInput } from "../test/documents/pdf/pdf-inputs.ts";

const at = process.argv.indexOf("--runs");
const RUNS = at > 0 ? Number(process.argv[at + 1]) : 200;
const WARM_UP = 30;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function measure(label: string, input: Parameters<typeof renderInvoicePdf>[0]): Promise<void> {
  let bytes = 0;
  for (let i = 0; i < WARM_UP; i++) bytes = (await renderInvoicePdf(input)).length;
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await renderInvoicePdf(input);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(28)} median ${quantile(times, 0.5).toFixed(1).padStart(6)} ms   p95 ${quantile(
      times,
      0.95,
    )
      .toFixed(1)
      .padStart(
        6,
      )} ms   max ${(times.at(-1) ?? 0).toFixed(1).padStart(6)} ms   (${RUNS} runs, ${Math.round(bytes / 1024)} KiB)`,
  );
}

console.log(
  `node ${process.version}, ${os.cpus()[0]?.model ?? "unknown cpu"} × ${os.cpus().length}, one thread`,
);
const first = performance.now();
await renderInvoicePdf(pdfInput(fullInvoice()));
console.log(`first rendering (fonts parsed, code cold): ${(performance.now() - first).toFixed(0)} ms`);
await measure("full invoice (2 lines)", pdfInput(fullInvoice()));
await measure("300-line invoice", pdfInput(manyLines(300)));
