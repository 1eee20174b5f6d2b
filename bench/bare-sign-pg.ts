/**
 * The bare durable sign on PostgreSQL: bench/bare-sign.ts's work where several processes share the
 * chains, as this service's API processes do. Each process (node:cluster, one port, as `serve
 * --processes N`) answers on one thread: parse the JSON body (Fastify), a canonical text (keys
 * sorted), an RSA-2048 OAEP encryption of the QR payload; then, with the other signs of its turn of
 * the event loop, one transaction of two round trips: the heads of the batch's chains locked (the
 * `begin` sent with it), then in chain order SHA-256 on the previous hash and an Ed25519 signature
 * each, and the inserts, the heads' update and the commit sent together; answered after the commit.
 * One batch in flight a process, as the service's group commit. A chain is the body's
 * `business_id`. No authentication, validation, idempotency, history or outbox.
 * bench/http.ts starts it (`--only bare`), bench/instructions.ts too (`--engine postgres`, one process
 * with no cluster: EINVOICE_BARE_PROCESSES=0); alone, on a database whose schema it may write:
 *   PORT=9997 EINVOICE_BARE_DATABASE_URL=postgres://… EINVOICE_BARE_PROCESSES=2 tsx bench/bare-sign-pg.ts
 */
import cluster from "node:cluster";
import { constants, createHash, generateKeyPairSync, publicEncrypt, sign } from "node:crypto";
import type { Writable } from "node:stream";
import Fastify from "fastify";
import pg from "pg";
import { canonical } from "./bare-canonical.ts";

const url = process.env.EINVOICE_BARE_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
// 0: no cluster, this process answers itself (bench/instructions.ts counts it under valgrind, which
// follows no worker that callgrind_control could reach).
const processes = Number(process.env.EINVOICE_BARE_PROCESSES ?? 1);

if (processes === 0) {
  await createTables();
  await serve();
} else if (cluster.isPrimary) {
  await createTables();
  let listening = 0;
  cluster.on("listening", (_worker, address) => {
    if (++listening === processes) process.stdout.write(`http://127.0.0.1:${address.port}\n`);
  });
  for (let i = 0; i < processes; i++) cluster.fork();
} else {
  await serve();
}

async function createTables(): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `create table if not exists bare_chains (id text primary key, head text not null, length bigint not null);
     create table if not exists bare_invoices (irn text primary key, chain text not null, seq bigint not null,
       document text not null, hash text not null, signature text not null, qr text not null)`,
  );
  // Stored as the service stores its invoices (src/db/migration-0020.ts): the row kept whole up to
  // 3,000 bytes, a long document compressed with lz4 where the server has it. With PostgreSQL's
  // defaults the document went to the TOAST table, compressed with pglz: 26 µs of the server's CPU
  // a sign in pglz alone, which the service does not spend (bench/RESULTS.md, 2026-12-08).
  await client.query("alter table bare_invoices set (toast_tuple_target = 3000)");
  const { rows } = await client.query(
    "select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'",
  );
  if (rows[0]?.lz4) await client.query("alter table bare_invoices alter column document set compression lz4");
  await client.end();
}

async function serve(): Promise<void> {
  // pg's pipeline mode: the statements of a round trip go out together, unawaited one by one.
  const pool = new pg.Pool({ connectionString: url, max: 4, pipeline: true } as pg.PoolConfig);
  const signing = generateKeyPairSync("ed25519").privateKey;
  const qrKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey;

  type Pending = { irn: string; chain: string; text: string; qr: string; done: (err?: Error) => void };
  let queue: Pending[] = [];
  let running = false;

  // Prepared by name once a connection: the same texts whatever a batch's size (arrays, unnest).
  const lock = {
    name: "bare_lock",
    text: "select id, head, length from bare_chains where id = any($1::text[]) order by id for update",
  };
  const create = {
    name: "bare_create",
    text: "insert into bare_chains (id, head, length) select unnest($1::text[]), repeat('0', 64), 0 on conflict do nothing",
  };
  const insert = {
    name: "bare_insert",
    text: `insert into bare_invoices (irn, chain, seq, document, hash, signature, qr)
           select * from unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])`,
  };
  const move = {
    name: "bare_move",
    text: `update bare_chains c set head = m.head, length = m.length
           from unnest($1::text[], $2::text[], $3::bigint[]) as m(id, head, length) where c.id = m.id`,
  };

  /**
   * The statements `send` submits go out in one write to the socket (held until the microtasks
   * after it), as the service's do: a write is a system call each.
   */
  function together<T>(client: pg.PoolClient, send: () => T): T {
    const socket = (client as unknown as { connection: { stream: Writable } }).connection.stream;
    socket.cork();
    try {
      return send();
    } finally {
      process.nextTick(() => socket.uncork());
    }
  }

  async function commit(batch: Pending[]): Promise<void> {
    const chains = [...new Set(batch.map((p) => p.chain))];
    const client = await pool.connect();
    try {
      let [, locked] = await together(client, () =>
        Promise.all([client.query("begin"), client.query({ ...lock, values: [chains] })]),
      );
      if (locked.rowCount !== chains.length) {
        // A chain's first sign: its head made, then locked.
        await client.query({ ...create, values: [chains] });
        locked = await client.query({ ...lock, values: [chains] });
      }
      const heads = new Map(
        locked.rows.map((r: { id: string; head: string; length: string }) => [
          r.id,
          { head: r.head, length: Number(r.length) },
        ]),
      );
      // The insert's columns, one array each (unnest).
      const irns: string[] = [];
      const chainIds: string[] = [];
      const seqs: string[] = [];
      const documents: string[] = [];
      const hashes: string[] = [];
      const signatures: string[] = [];
      const qrs: string[] = [];
      for (const p of batch) {
        const head = heads.get(p.chain) as { head: string; length: number };
        const hash = createHash("sha256").update(head.head).update(p.text).digest("hex");
        const signature = sign(null, Buffer.from(hash, "hex"), signing).toString("base64");
        head.head = hash;
        head.length += 1;
        irns.push(p.irn);
        chainIds.push(p.chain);
        seqs.push(String(head.length));
        documents.push(p.text);
        hashes.push(hash);
        signatures.push(signature);
        qrs.push(p.qr);
      }
      const moved = [...heads];
      await together(client, () =>
        Promise.all([
          client.query({ ...insert, values: [irns, chainIds, seqs, documents, hashes, signatures, qrs] }),
          client.query({
            ...move,
            values: [
              moved.map(([id]) => id),
              moved.map(([, head]) => head.head),
              moved.map(([, head]) => String(head.length)),
            ],
          }),
          client.query("commit"),
        ]),
      );
      client.release();
    } catch (err) {
      await client.query("rollback").catch(() => {});
      client.release();
      throw err;
    }
  }

  /** After the poll phase, as the service's batcher: every request read in it joins the batch. */
  function next(): void {
    if (running || queue.length === 0) return;
    running = true;
    setImmediate(() => {
      const batch = queue.slice(0, 64);
      queue = queue.slice(batch.length);
      commit(batch)
        .then(
          () => {
            for (const p of batch) p.done();
          },
          (err: Error) => {
            for (const p of batch) p.done(err);
          },
        )
        .finally(() => {
          running = false;
          next();
        });
    });
  }

  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  app.post("/sign", async (request) => {
    const document = request.body as { irn?: string; business_id?: string };
    const text = canonical(document);
    const irn = String(document.irn);
    const qr = publicEncrypt(
      { key: qrKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" },
      Buffer.from(JSON.stringify({ irn, digest: createHash("sha256").update(text).digest("hex") })),
    ).toString("base64");
    await new Promise<void>((resolve, reject) => {
      queue.push({
        irn,
        chain: String(document.business_id),
        text,
        qr,
        done: (err) => (err ? reject(err) : resolve()),
      });
      next();
    });
    return { status: true, code: 200, message: "Invoice signed successfully", data: [] };
  });
  app.get("/", async () => ({ ok: true }));
  await app.listen({ port: Number(process.env.PORT ?? 9997), host: "127.0.0.1" });
}
