import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import type { IdempotencyKeyTable } from "../db/schema.ts";

/** An answer up to this size is kept as it is (a sign's success is under 200 bytes). */
export const PLAIN_MAX_BYTES = 1024;
/**
 * The most one kept answer may take, compressed. A batch's answer compresses well (1,000 invalid
 * `{}` answer 912 kB, 6.9 kB gzipped); one still larger keeps only its status, size and SHA-256.
 */
export const KEPT_MAX_BYTES = 64 * 1024;

const gzipped = promisify(gzip);
const gunzipped = promisify(gunzip);

/** How an answer is kept: the columns of its key's row that hold it. */
export type KeptAnswer = Pick<
  IdempotencyKeyTable,
  "response" | "response_gzip" | "response_bytes" | "response_sha256" | "replay"
>;

/** Hex SHA-256, computed off the event loop (an answer may be megabytes). */
export async function sha256(body: string | Buffer): Promise<string> {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  return Buffer.from(await crypto.subtle.digest("SHA-256", bytes)).toString("hex");
}

/** Gzip, off the event loop; null once the output passes `limit` (compression stops there). */
async function compressedWithin(body: Buffer, limit: number): Promise<Buffer | null> {
  try {
    return await gzipped(body, { maxOutputLength: limit });
  } catch (err) {
    if ((err as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") return null;
    throw err;
  }
}

/** An answer of up to 1 KiB, kept as it is, and the bytes that takes; undefined for a larger one. */
export function keptAsIs(body: string): { kept: KeptAnswer; bytes: number } | undefined {
  const bytes = Buffer.byteLength(body);
  if (bytes > PLAIN_MAX_BYTES) return undefined;
  const kept = {
    response: body,
    response_gzip: null,
    response_bytes: null,
    response_sha256: null,
    replay: null,
  };
  return { kept, bytes };
}

/**
 * How to keep an answer, and the bytes that takes: as it is up to 1 KiB, gzipped when that takes at
 * most 64 KiB, else not at all. `changedNothing` is asked only then: whether a retry may run the
 * request again (`rerun`) or must be refused (`refuse`).
 */
export async function keep(
  body: string,
  changedNothing: () => boolean,
): Promise<{ kept: KeptAnswer; bytes: number }> {
  const asIs = keptAsIs(body);
  if (asIs) return asIs;
  const raw = Buffer.from(body);
  const [digest, compressed] = await Promise.all([sha256(raw), compressedWithin(raw, KEPT_MAX_BYTES)]);
  const large = { response: null, response_bytes: raw.length, response_sha256: digest };
  if (compressed)
    return { kept: { ...large, response_gzip: compressed, replay: null }, bytes: compressed.length };
  return { kept: { ...large, response_gzip: null, replay: changedNothing() ? "rerun" : "refuse" }, bytes: 0 };
}

/** The body of a kept answer, as it was sent; undefined when it was too large to keep. */
export async function keptBody(row: KeptAnswer): Promise<string | undefined> {
  if (row.response !== null) return row.response;
  if (row.response_gzip === null) return undefined;
  const limit = row.response_bytes ?? undefined;
  return (await gunzipped(row.response_gzip, limit ? { maxOutputLength: limit } : {})).toString();
}
