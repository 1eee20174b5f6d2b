import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import { DeliveryError } from "../../../src/transmission/authority/connector.ts";
import { mbsClient } from "../../../src/transmission/authority/mbs-client.ts";
import { mbsReceipts, PULL_MAX_BYTES } from "../../../src/transmission/authority/mbs-receipts.ts";

/*
 * The buyer's side of the MBS connector against a real HTTP server that answers what it is given:
 * pull's answer shape is [unknown] in the MBS spec (section 2), so every likely shape is read, and
 * an answer that is not a whole list is refused rather than read as a shorter one.
 */

type Seen = { method: string; url: string; body: string; headers: http.IncomingHttpHeaders };

async function server(
  t: TestContext,
  answer: (seen: Seen, res: http.ServerResponse) => void,
  callTimeoutMs = 2000,
) {
  const seen: Seen[] = [];
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const one = {
        method: req.method ?? "",
        url: req.url ?? "",
        body: Buffer.concat(chunks).toString(),
        headers: req.headers,
      };
      seen.push(one);
      answer(one, res);
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => srv.close(() => resolve())));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  const client = mbsClient({ url, apiKey: "k-123", apiSecret: "s-456", callTimeoutMs });
  return { seen, client };
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

const doc = (irn: string, tin = "31845560-0001") => ({
  irn,
  accounting_customer_party: { party_name: "Buyer", tin },
  accounting_supplier_party: { party_name: "Seller", tin: "20198222-0002" },
});

const window = { from: "2026-11-24", to: "2026-11-24" };

test("pull asks for one window with the credential headers, and reads each likely shape of its answer", async (t) => {
  const shapes: unknown[] = [
    {
      code: 200,
      data: [
        {
          irn: "A1-A1B2C3D4-20261124",
          customer_tin: "31845560-0001",
          transmitted_at: "2026-11-24T10:00:00Z",
          document: doc("A1-A1B2C3D4-20261124"),
        },
      ],
    },
    { code: 200, data: [doc("A1-A1B2C3D4-20261124")] },
    { code: 200, data: { items: [{ invoice: doc("A1-A1B2C3D4-20261124") }] } },
    [doc("A1-A1B2C3D4-20261124")],
  ];
  let next = 0;
  const { seen, client } = await server(t, (_s, res) => json(res, 200, shapes[next++ % shapes.length]));
  const receipts = mbsReceipts(client);
  for (let i = 0; i < shapes.length; i++) {
    const listed = await receipts.pull(window, AbortSignal.timeout(5000));
    const [one] = await listed.read(0, listed.length);
    assert.equal(listed.length, 1, `shape ${i}`);
    assert.ok(one);
    assert.equal(one.irn, "A1-A1B2C3D4-20261124", `shape ${i}`);
    assert.equal((one.document.accounting_customer_party as { tin: string }).tin, "31845560-0001");
  }
  const first = seen[0];
  assert.ok(first);
  assert.equal(first.method, "GET");
  const url = new URL(first.url, "http://x");
  assert.equal(url.pathname, "/api/v1/invoice/transmit/pull");
  assert.deepEqual(Object.fromEntries(url.searchParams), {
    confirmed: "false",
    from: "2026-11-24",
    to: "2026-11-24",
  });
  assert.equal(first.headers["x-api-key"], "k-123");
  assert.equal(first.headers["x-api-secret"], "s-456");
  // With `omit`, no `confirmed` at all.
  await mbsReceipts(client, "omit").pull(window, AbortSignal.timeout(5000));
  assert.equal(new URL(seen.at(-1)?.url ?? "", "http://x").searchParams.has("confirmed"), false);
});

test("an empty answer is nothing waiting; an entry that is not an object is handed on empty, not dropped", async (t) => {
  const answers: unknown[] = [
    { code: 200, data: null },
    { code: 200, data: [] },
    { code: 200, data: [42, doc("B1-A1B2C3D4-20261124")] },
  ];
  let next = 0;
  const { client } = await server(t, (_s, res) => json(res, 200, answers[next++]));
  const receipts = mbsReceipts(client);
  assert.equal((await receipts.pull(window, AbortSignal.timeout(5000))).length, 0);
  assert.equal((await receipts.pull(window, AbortSignal.timeout(5000))).length, 0);
  const list = await receipts.pull(window, AbortSignal.timeout(5000));
  const mixed = await list.read(0, list.length);
  assert.equal(mixed.length, 2);
  assert.deepEqual(mixed[0], { document: {} });
  assert.equal(mixed[1]?.irn, "B1-A1B2C3D4-20261124");
});

test("an answer without a list, a cut-off or oversized answer, a 5xx and a refused credential each fail the pull", async (t) => {
  const big = Buffer.alloc(PULL_MAX_BYTES + 1024, 0x20);
  const answers: Array<(res: http.ServerResponse) => void> = [
    (res) => json(res, 200, { code: 200, data: { message: "ok" } }),
    (res) => json(res, 200, { code: 200, data: "[]" }),
    (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("[");
      res.end(big);
    },
    (res) => json(res, 502, { code: 502, data: null, message: "error has occurred" }),
    (res) =>
      json(res, 400, {
        code: 400,
        data: null,
        message: "error has occurred",
        error: { id: "e1", handler: "handler", public_message: "unable to validate api key" },
      }),
  ];
  let next = 0;
  // Time enough to send 64 MiB on a busy machine: the bound, not the time limit, must end that call.
  const { client } = await server(
    t,
    (_s, res) => (answers[next++] as (r: http.ServerResponse) => void)(res),
    120_000,
  );
  const receipts = mbsReceipts(client);
  const failures: DeliveryError[] = [];
  for (let i = 0; i < answers.length; i++) {
    await assert.rejects(receipts.pull(window, AbortSignal.timeout(120_000)), (err: unknown) => {
      assert.ok(err instanceof DeliveryError, String(err));
      failures.push(err);
      return true;
    });
  }
  assert.match(failures[0]?.message ?? "", /without a list of invoices/);
  assert.match(failures[2]?.message ?? "", new RegExp(`over ${PULL_MAX_BYTES} bytes`));
  assert.equal(failures[3]?.permanent, false);
  assert.equal(failures[4]?.credential, true);
  // No credential appears in any failure's words.
  for (const failure of failures) assert.ok(!/k-123|s-456/.test(failure.message));
});

test("acknowledge PATCHes the IRN with the integrators' body and keeps MBS's data; a refusal keeps MBS's words", async (t) => {
  const irn = "INV1-A1B2C3D4-20261124";
  let next = 0;
  const { seen, client } = await server(t, (_s, res) =>
    next++ === 0
      ? json(res, 200, { code: 200, data: { irn, status: "ACKNOWLEDGED" } })
      : json(res, 404, {
          code: 404,
          data: null,
          message: "error has occurred",
          error: {
            id: "e2",
            handler: "invoice_actions",
            details: "invoice not found",
            public_message: "not found",
          },
        }),
  );
  const receipts = mbsReceipts(client);
  assert.deepEqual(await receipts.acknowledge(irn, AbortSignal.timeout(5000)), {
    irn,
    status: "ACKNOWLEDGED",
  });
  assert.equal(seen[0]?.method, "PATCH");
  assert.equal(seen[0]?.url, `/api/v1/invoice/transmit/${irn}`);
  assert.deepEqual(JSON.parse(seen[0]?.body ?? ""), { message: "ACKNOWLEDGED" });
  await assert.rejects(receipts.acknowledge(irn, AbortSignal.timeout(5000)), (err: unknown) => {
    assert.ok(err instanceof DeliveryError);
    assert.equal(err.permanent, true);
    assert.equal(err.answer?.details, "invoice not found");
    return true;
  });
});

test("acknowledge refuses, for good and without a call, an IRN that is not an IRN", async (t) => {
  const { seen, client } = await server(t, (_s, res) => json(res, 200, { code: 200, data: null }));
  const receipts = mbsReceipts(client);
  for (const irn of [
    "..",
    "a/../b",
    "A/1",
    "INV1-a1b2c3d4-20261124",
    "INV1-A1B2C3D4-20261301",
    "",
    "x?y#z",
  ]) {
    await assert.rejects(receipts.acknowledge(irn, AbortSignal.timeout(5000)), (err: unknown) => {
      assert.ok(err instanceof DeliveryError, irn);
      assert.equal(err.permanent, true, irn);
      assert.equal(err.credential, false, irn);
      assert.match(err.message, /acknowledge not sent/, irn);
      return true;
    });
  }
  assert.deepEqual(seen, []);
});
