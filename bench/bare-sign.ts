/**
 * The bare durable sign: what a sign cannot skip, done bare on one thread. Parse the JSON body
 * (Fastify), a canonical text (keys sorted), SHA-256 chained on the previous invoice's hash, an
 * Ed25519 signature, an RSA-2048 OAEP encryption of the QR payload, and one INSERT of the document,
 * committed with the other signs of the same turn of the event loop in one transaction (WAL,
 * synchronous=FULL: one fsync) before the answer. No authentication, validation, idempotency,
 * history or outbox. bench/limit.ts starts it; alone:
 *   PORT=9998 EINVOICE_BARE_DB=bare.db tsx bench/bare-sign.ts
 */
import { constants, createHash, generateKeyPairSync, publicEncrypt, sign } from "node:crypto";
import SQLite from "better-sqlite3";
import Fastify from "fastify";
import { canonical } from "./bare-canonical.ts";

const db = new SQLite(process.env.EINVOICE_BARE_DB ?? ":memory:");
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec(
  "create table if not exists invoices (irn text primary key, document text not null, hash text not null, signature text not null, qr text not null)",
);
const insert = db.prepare("insert into invoices (irn, document, hash, signature, qr) values (?, ?, ?, ?, ?)");
const signing = generateKeyPairSync("ed25519").privateKey;
const qrKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey;

type Pending = { row: [string, string, string, string, string]; done: (err?: Error) => void };
let pending: Pending[] = [];
let previous = "0".repeat(64);
const commit = db.transaction((rows: Pending[]) => {
  for (const p of rows) insert.run(...p.row);
});

/** The turn's signs, committed together once every request read in it has been signed. */
function flush(): void {
  const batch = pending;
  pending = [];
  try {
    commit(batch);
    for (const p of batch) p.done();
  } catch (err) {
    for (const p of batch) p.done(err as Error);
  }
}

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.post("/sign", async (request) => {
  const document = request.body as { irn?: string };
  const text = canonical(document);
  const hash = createHash("sha256").update(previous).update(text).digest("hex");
  previous = hash;
  const signature = sign(null, Buffer.from(hash, "hex"), signing).toString("base64");
  const irn = String(document.irn);
  const qr = publicEncrypt(
    { key: qrKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" },
    Buffer.from(JSON.stringify({ irn, certificate: signature })),
  ).toString("base64");
  await new Promise<void>((resolve, reject) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push({ row: [irn, text, hash, signature, qr], done: (err) => (err ? reject(err) : resolve()) });
  });
  return { status: true, code: 200, message: "Invoice signed successfully", data: [] };
});
const address = await app.listen({ port: Number(process.env.PORT ?? 9998), host: "127.0.0.1" });
process.stdout.write(`${address}\n`);
