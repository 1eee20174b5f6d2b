import fs from "node:fs";
import path from "node:path";
import { BATCH_MAX_DOCUMENTS } from "../invoices/registration/batch-limits.ts";

/** One line of the report: what became of one document of the source. */
export type ReportLine = {
  /** `FILE:LINE` for a JSONL source, the file's path for a folder. */
  source: string;
  irn: string | null;
  status: "signed" | "duplicate" | "invalid" | "skipped";
  transmission?: string;
  message?: string;
  details?: string;
  violations?: unknown[];
  warnings?: unknown[];
};

export type SubmitOptions = {
  /** A JSONL file (one document per line) or a folder of `.json` files (one document each). */
  source: string;
  /** The service's base address, e.g. http://127.0.0.1:8080. */
  api: string;
  apiKey: string;
  apiSecret: string;
  transmit: boolean;
  /** JSONL report, appended to: a run after an interruption skips what an earlier run signed. */
  report: string;
  batchSize: number;
  onProgress?: (done: number, total: number) => void;
};

type Entry = { source: string; irn: string | null; document?: unknown; unreadable?: string };

const irnOf = (document: unknown) => {
  const irn = typeof document === "object" && document !== null ? (document as { irn?: unknown }).irn : null;
  return typeof irn === "string" ? irn : null;
};

function parse(source: string, text: string): Entry {
  try {
    const document: unknown = JSON.parse(text);
    return { source, irn: irnOf(document), document };
  } catch (err) {
    return { source, irn: null, unreadable: `not valid JSON: ${(err as Error).message}` };
  }
}

function readSource(source: string): Entry[] {
  if (fs.statSync(source).isDirectory()) {
    return fs
      .readdirSync(source)
      .filter((name) => name.endsWith(".json"))
      .sort()
      .map((name) => parse(path.join(source, name), fs.readFileSync(path.join(source, name), "utf8")));
  }
  return fs
    .readFileSync(source, "utf8")
    .split("\n")
    .flatMap((line, i) => (line.trim() === "" ? [] : [parse(`${source}:${i + 1}`, line)]));
}

/** IRNs an earlier run left signed (or found registered): they are reported again, not re-sent. */
function alreadySigned(report: string): Set<string> {
  const signed = new Set<string>();
  if (!fs.existsSync(report)) return signed;
  for (const line of fs.readFileSync(report, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      const entry = JSON.parse(line) as Partial<ReportLine>;
      if (entry.irn && (entry.status === "signed" || entry.status === "duplicate")) signed.add(entry.irn);
    } catch {
      // A line cut short by an interruption says nothing: its document is sent again.
    }
  }
  return signed;
}

export class SubmitError extends Error {}

/** Posts one batch, waiting out 429 and 503 answers as their Retry-After says (a few times). */
async function post(options: SubmitOptions, documents: unknown[]): Promise<Array<Record<string, unknown>>> {
  const url = `${options.api.replace(/\/+$/, "")}/api/v1/einvoice/batch/${options.transmit ? "sign-transmit" : "sign"}`;
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "api-key": options.apiKey,
          "api-secret": options.apiSecret,
        },
        body: JSON.stringify({ invoices: documents }),
      });
    } catch (err) {
      throw new SubmitError(`cannot reach ${options.api}: ${(err as Error).message}`);
    }
    const text = await res.text();
    if (res.status === 200) return (JSON.parse(text) as { data: Array<Record<string, unknown>> }).data;
    if ((res.status === 429 || res.status === 503) && attempt < 6) {
      const seconds = Number(res.headers.get("retry-after") ?? "1");
      await new Promise((resolve) => setTimeout(resolve, Math.min(60, Math.max(1, seconds)) * 1000));
      continue;
    }
    let reason = text;
    try {
      const body = JSON.parse(text) as { message?: string; error?: { details?: string } };
      reason = [body.message, body.error?.details].filter(Boolean).join(": ");
    } catch {
      // Not the service's envelope: the text itself is the best account.
    }
    throw new SubmitError(`the service answered ${res.status}: ${reason}`);
  }
}

/**
 * Submits every document of a JSONL file or a folder through `batch/sign` (or
 * `batch/sign-transmit`), a batch at a time, and writes one report line per document. The report is
 * appended to as each batch is answered, so an interrupted run loses nothing: run the same command
 * again and the documents it signed are reported as skipped instead of being sent again.
 */
export async function submit(options: SubmitOptions) {
  const entries = readSource(options.source);
  const before = alreadySigned(options.report);
  const counts = { signed: 0, duplicate: 0, invalid: 0, skipped: 0 };
  const out = fs.openSync(options.report, "a");
  const write = (line: ReportLine) => {
    counts[line.status] += 1;
    fs.writeSync(out, `${JSON.stringify(line)}\n`);
  };
  let done = 0;
  const advance = (n: number) => {
    done += n;
    options.onProgress?.(done, entries.length);
  };
  try {
    const pending: Entry[] = [];
    for (const entry of entries) {
      if (entry.unreadable) {
        write({ source: entry.source, irn: null, status: "invalid", message: entry.unreadable });
        advance(1);
      } else if (entry.irn && before.has(entry.irn)) {
        write({
          source: entry.source,
          irn: entry.irn,
          status: "skipped",
          message: "signed by an earlier run",
        });
        advance(1);
      } else {
        pending.push(entry);
      }
    }
    const size = Math.min(BATCH_MAX_DOCUMENTS, Math.max(1, options.batchSize));
    for (let at = 0; at < pending.length; at += size) {
      const batch = pending.slice(at, at + size);
      const results = await post(
        options,
        batch.map((entry) => entry.document),
      );
      batch.forEach((entry, i) => {
        const { index: _index, irn, ...result } = results[i] ?? { status: "invalid", message: "no result" };
        write({
          source: entry.source,
          irn: typeof irn === "string" ? irn : entry.irn,
          ...result,
        } as ReportLine);
      });
      advance(batch.length);
    }
  } finally {
    fs.closeSync(out);
  }
  return { documents: entries.length, ...counts, report: options.report };
}
