import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import zlib from "node:zlib";
import { DeliveryError } from "../../../src/transmission/authority/connector.ts";
import { mbsClient } from "../../../src/transmission/authority/mbs-client.ts";
import { mbsReceipts } from "../../../src/transmission/authority/mbs-receipts.ts";
import { ENTRY_MAX_BYTES, PULL_MAX_ENTRIES } from "../../../src/transmission/authority/pull-answer.ts";

/*
 * A pull's answer as a hostile or broken MBS would send it, from a real HTTP server: bounded in
 * entries and in how far an encoded answer inflates, and each entry bounded on its own, so that one
 * document built to hurt is set aside and the others of its day are read.
 */

async function server(t: TestContext, answer: (res: http.ServerResponse) => void) {
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(res));
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => srv.close(() => resolve())));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return mbsReceipts(mbsClient({ url, apiKey: "k-123", apiSecret: "s-456", callTimeoutMs: 20_000 }));
}

const window = { from: "2026-11-24", to: "2026-11-24" };
const doc = (n: number) => ({
  irn: `A${n}-A1B2C3D4-20261124`,
  accounting_customer_party: { party_name: "Buyer", tin: "31845560-0001" },
});

const refusedWith = (pattern: RegExp) => (err: unknown) => {
  assert.ok(err instanceof DeliveryError, String(err));
  assert.match(err.message, pattern);
  return true;
};

test("a list longer than the bound is refused whole, and read no further than the bound", async (t) => {
  const zeros = `{"code":200,"data":[${"0,".repeat(PULL_MAX_ENTRIES)}0]}`;
  const receipts = await server(t, (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(zeros);
  });
  await assert.rejects(
    receipts.pull(window, AbortSignal.timeout(20_000)),
    refusedWith(new RegExp(`more than ${PULL_MAX_ENTRIES} entries in data`)),
  );
  // At the bound exactly, the list is read.
  const atBound = `[${"0,".repeat(PULL_MAX_ENTRIES - 1)}0]`;
  const again = await server(t, (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(atBound);
  });
  const list = await again.pull(window, AbortSignal.timeout(20_000));
  assert.equal(list.length, PULL_MAX_ENTRIES);
});

test("a gzip answer that inflates a thousandfold is refused as it grows", async (t) => {
  // 20 kB of gzip that would be 21 MB of `0,`: ten million entries.
  const bomb = zlib.gzipSync(`{"code":200,"data":[${"0,".repeat(10_500_000)}0]}`, { level: 9 });
  assert.ok(bomb.length < 64_000, `the bomb is ${bomb.length} bytes`);
  const receipts = await server(t, (res) => {
    res.writeHead(200, {
      "content-type": "application/json",
      "content-encoding": "gzip",
      "content-length": bomb.length,
    });
    res.end(bomb);
  });
  await assert.rejects(
    receipts.pull(window, AbortSignal.timeout(20_000)),
    refusedWith(/inflated past 200 times its \d+ encoded bytes/),
  );
});

test("an answer compressed as real lists are is read whole", async (t) => {
  const body = JSON.stringify({ code: 200, data: Array.from({ length: 2000 }, (_, i) => doc(i)) });
  const gzipped = zlib.gzipSync(body);
  const receipts = await server(t, (res) => {
    res.writeHead(200, {
      "content-type": "application/json",
      "content-encoding": "gzip",
      "content-length": gzipped.length,
    });
    res.end(gzipped);
  });
  const list = await receipts.pull(window, AbortSignal.timeout(20_000));
  assert.equal(list.length, 2000);
  const read = await list.read(1990, 2000);
  assert.deepEqual(
    read.map((entry) => entry.irn),
    Array.from({ length: 10 }, (_, i) => `A${1990 + i}-A1B2C3D4-20261124`),
  );
});

test("an entry built to hurt is set aside with its reason; the entries beside it are read", async (t) => {
  const deep = `${"[".repeat(6000)}${"]".repeat(6000)}`;
  const wide = `{${Array.from({ length: 2000 }, (_, i) => `"f${i}":0`).join(",")}}`;
  const huge = JSON.stringify({ ...doc(97), note: "x".repeat(ENTRY_MAX_BYTES) });
  const nul = JSON.stringify({ ...doc(96), note: "a\u0000b" });
  const entries = [
    JSON.stringify(doc(1)),
    `{"irn":"A2-A1B2C3D4-20261124","note":${deep}}`,
    wide,
    huge,
    nul,
    '{"irn": nope}',
    JSON.stringify(doc(3)),
  ];
  const receipts = await server(t, (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(`{"code":200,"data":[${entries.join(",")}]}`);
  });
  const list = await receipts.pull(window, AbortSignal.timeout(20_000));
  assert.equal(list.length, entries.length);
  const read = await list.read(0, list.length);
  assert.equal(read[0]?.irn, "A1-A1B2C3D4-20261124");
  assert.equal(read[6]?.irn, "A3-A1B2C3D4-20261124");
  assert.match(read[1]?.setAside ?? "", /^entry 2 of the list nests deeper than 64 levels$/);
  assert.match(read[2]?.setAside ?? "", /^an object in entry 3 of the list has 2,000 members/);
  assert.match(
    read[3]?.setAside ?? "",
    new RegExp(`^entry 4 of the list is \\d+ bytes; at most ${ENTRY_MAX_BYTES}`),
  );
  assert.match(read[4]?.setAside ?? "", /entry 5 of the list contains a NUL character/);
  assert.equal(read[5]?.setAside, "entry 6 of the list is not JSON");
  for (const i of [1, 2, 3, 4, 5]) assert.deepEqual(read[i]?.document, {});
});

test("an answer whose brackets do not balance is refused whole: which entries it holds cannot be told", async (t) => {
  const receipts = await server(t, (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      `{"code":200,"data":[${JSON.stringify(doc(1))},{"irn":"A2-A1B2C3D4-20261124",${JSON.stringify(doc(3))}]}`,
    );
  });
  await assert.rejects(receipts.pull(window, AbortSignal.timeout(20_000)), refusedWith(/not JSON/));
});

test("an error answer built to hurt is read as words, not parsed: it is a transient failure", async (t) => {
  const deep = `{"code":500,"error":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
  const receipts = await server(t, (res) => {
    res.writeHead(500, { "content-type": "application/json" });
    res.end(deep);
  });
  await assert.rejects(receipts.pull(window, AbortSignal.timeout(20_000)), (err: unknown) => {
    assert.ok(err instanceof DeliveryError, String(err));
    assert.equal(err.permanent, false);
    assert.match(err.message, /MBS pull answered 500/);
    return true;
  });
});

test("brackets that close what they did not open, or text after the answer's end, refuse it whole", async (t) => {
  const bodies = [
    `{"code":200,"data":[${JSON.stringify(doc(1))},${JSON.stringify(doc(2))}}}`,
    `[${JSON.stringify(doc(1))}]][`,
    `[${JSON.stringify(doc(1))}] [${JSON.stringify(doc(2))}]`,
  ];
  let next = 0;
  const receipts = await server(t, (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(bodies[next++]);
  });
  for (let i = 0; i < bodies.length; i++)
    await assert.rejects(
      receipts.pull(window, AbortSignal.timeout(20_000)),
      refusedWith(/not JSON/),
      `body ${i}`,
    );
});

test("text built to make the reading quadratic is read in linear time", async (t) => {
  // A run of colons after one long name (each colon read the name again), and entries of many
  // strings with one `\u` escape at their end (each string searched to it).
  const colons = `{"${"k".repeat(1 << 20)}"${":".repeat(1 << 20)}}`;
  const strings = Array.from({ length: 8 }, () => `[${'"",'.repeat(100_000)}"\\u0041"]`);
  const bodies = [colons, `{"code":200,"data":[${strings.join(",")}]}`];
  let next = 0;
  const receipts = await server(t, (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(bodies[next++]);
  });
  const started = performance.now();
  await assert.rejects(
    receipts.pull(window, AbortSignal.timeout(20_000)),
    refusedWith(/not JSON|without a list/),
  );
  const list = await receipts.pull(window, AbortSignal.timeout(20_000));
  const read = await list.read(0, list.length);
  assert.equal(read.length, 8);
  const ms = performance.now() - started;
  // Before: about 2.4 s for each of the eight entries, and hours for the colons.
  assert.ok(ms < 5000, `read in ${ms.toFixed(0)} ms`);
});
