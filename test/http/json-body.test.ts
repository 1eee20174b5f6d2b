import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { arrayMember, MAX_JSON_DEPTH, MAX_JSON_MEMBERS, quickScan, scanJson } from "../../src/json-scan.ts";
import { build, fixture, tenant } from "../helpers.ts";

/** JSON text of `value` with whitespace of the given kind between tokens. */
function spaced(value: unknown, gap: string): string {
  return JSON.stringify(value, null, gap === "" ? undefined : gap);
}

test("arrayMember finds the array under a key of the top-level object, element by element", () => {
  fc.assert(
    fc.property(
      fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 20 }),
      fc.dictionary(
        fc.string().filter((k) => k !== "invoices"),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 4 },
      ),
      fc.constantFrom("", " ", "\t", "  "),
      (invoices, others, gap) => {
        const body = { ...others, invoices };
        const text = spaced(body, gap);
        const found = arrayMember(text, "invoices");
        assert.ok(found, text);
        const rebuilt = found.elements.map(([from, to]) => JSON.parse(text.slice(from, to)) as unknown);
        // As parsed whole (the text already says -0 as 0).
        assert.deepEqual(rebuilt, (JSON.parse(text) as { invoices: unknown[] }).invoices);
        assert.equal(rebuilt.length, invoices.length);
        const outside = JSON.parse(`${text.slice(0, found.open)}[]${text.slice(found.close + 1)}`) as Record<
          string,
          unknown
        >;
        assert.deepEqual({ ...outside, invoices: rebuilt }, JSON.parse(text));
      },
    ),
    { numRuns: 500 },
  );
  assert.equal(arrayMember("[1,2]", "invoices"), undefined, "not an object");
  assert.equal(arrayMember('{"invoices":[1],"invoices":[2]}', "invoices"), undefined, "the key twice");
  assert.equal(arrayMember('{"other":{"invoices":[1]}}', "invoices"), undefined, "only at the top level");
  assert.equal(arrayMember('{"invoices\\"":[1]}', "invoices"), undefined, "an escaped name is its own");
});

test("scanJson measures depth, objects, members and values, and flags what needs a second look", () => {
  const scan = scanJson('{"a":[1,2,{"b":"x\\u0000"}],"c":"\\ud800","d":1e400}');
  assert.equal(scan.depth, 3);
  assert.equal(scan.containers, 3);
  assert.equal(scan.members, 3);
  assert.ok(scan.nul && scan.surrogateEscape && scan.hugeNumber);
  const plain = scanJson('{"a":"[{\\"\\\\u0000 1e999","b":12345.5e-10}');
  assert.equal(plain.depth, 1, "brackets in strings are text");
  assert.ok(
    !plain.nul && !plain.surrogateEscape && !plain.hugeNumber,
    "escaped backslashes and small exponents",
  );
  assert.ok(scanJson(`[1${"0".repeat(300)}]`).hugeNumber, "300 digits");
  assert.equal(quickScan(`[1${"0".repeat(300)}]`), undefined, "300 digits: scanned");
  assert.equal(quickScan(`{"a":1e-400}`), undefined, "a three-digit exponent: scanned");
  // A UUID in a string looks like an exponent to a search; after a quote it is a string's.
  const id = '{"business_id":"0e123456-aaaa-4bbb-8ccc-dddddddddddd"}';
  assert.equal(quickScan(id)?.hugeNumber, false, "an exponent's look in a string: not scanned");
  assert.equal(scanJson(id).hugeNumber, false, "and no number there");
  // Where a number may stand, it is scanned, in a string too (the search cannot tell).
  for (const text of [
    "1e400",
    "\uFEFF1e400",
    '{"a": -1.5E+400}',
    "[1,\n2e400]",
    '{"a":[\t0e123]}',
    '["x:1e123"]',
  ]) {
    assert.equal(quickScan(text), undefined, `${JSON.stringify(text)}: scanned`);
  }
  for (const text of ['["ae123"]', '["-e123"]', '{"e123":1}', '["x1e123"]']) {
    assert.equal(quickScan(text)?.hugeNumber, false, `${JSON.stringify(text)}: not scanned`);
  }
  assert.equal(quickScan(`${"[".repeat(65)}${"]".repeat(65)}`), undefined, "too many brackets: scanned");
  assert.equal(quickScan('["\\u0000"]'), undefined, "an escape: scanned");
  assert.equal(quickScan(`[${"0,".repeat(3000)}0]`), undefined, "too long: scanned");
  assert.ok(!scanJson(`[${"1,".repeat(500)}1]`).hugeNumber, "many short numbers");
});

/**
 * A three-digit exponent after number characters that start the text or follow `:`, `,`, `[`,
 * whitespace or a BOM: where the quick scan must leave a body to the full scan.
 */
const NUMBER_EXPONENT = /(?<=(?:^|[:,[ \t\n\r\uFEFF])[-+.0-9]+)[eE][+-]?\d{3}/;

test("the quick scan leaves to the full scan exactly the bodies with a 200-digit run or a 3-digit exponent", () => {
  // The flag's pattern is tried from the first digit of a run only; the plain patterns are the oracle.
  const oracle = (text: string) => /\d{200}/.test(text) || NUMBER_EXPONENT.test(text);
  let flagged = 0;
  for (const run of [0, 1, 150, 199, 200, 201, 260]) {
    for (const [before, after] of [
      ["", ""],
      ["-", "5"],
      ["0.", "e9"],
      ["7a", ".25"],
      ['"x', '"'],
    ]) {
      for (const exponent of ["", "e10", "E-99", "e+100", "E1000"]) {
        const text = `{"a":[${before}${"9".repeat(run)}${after}${exponent},1]}`;
        const scan = quickScan(text);
        assert.equal(scan === undefined, oracle(text), text.slice(0, 40));
        if (scan) assert.equal(scan.hugeNumber, false, text.slice(0, 40));
        else flagged++;
      }
    }
  }
  assert.ok(flagged > 0 && flagged < 7 * 5 * 5, `${flagged} flagged: both answers met`);
});

test("the quick scan finds a 200-digit run wherever it starts and however digits lie around it", () => {
  // The run is looked for at every 100th character: the oracle is the plain pattern, and the runs
  // start at every offset, beside other digits, strings and other runs.
  const oracle = (text: string) => /\d{200}/.test(text) || NUMBER_EXPONENT.test(text);
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.integer({ min: 1, max: 260 }).map((n) => "7".repeat(n)),
          fc.constantFrom(",", '"x"', " ", "-", ".", "e9", "[", "]"),
        ),
        { maxLength: 12 },
      ),
      fc.nat({ max: 250 }),
      (parts, pad) => {
        const text = `[${" ".repeat(pad)}${parts.join("")}]`;
        if (text.length > 4999 || text.includes("\\u")) return;
        assert.equal(quickScan(text) === undefined, oracle(text), text);
      },
    ),
    { numRuns: 2000 },
  );
  for (let pad = 0; pad < 200; pad++) {
    assert.equal(quickScan(`[${" ".repeat(pad)}${"1".repeat(199)}]`)?.hugeNumber, false, `199 at ${pad}`);
    assert.equal(quickScan(`[${" ".repeat(pad)}${"1".repeat(200)}]`), undefined, `200 at ${pad}`);
  }
});

/** What a scan must find, worked out from the parsed value. */
function measured(
  value: unknown,
  depth = 0,
): { depth: number; containers: number; members: number; nul: boolean; lone: boolean } {
  const lone = (s: string) =>
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
  if (typeof value === "string")
    return { depth, containers: 0, members: 0, nul: value.includes("\0"), lone: lone(value) };
  if (typeof value !== "object" || value === null)
    return { depth, containers: 0, members: 0, nul: false, lone: false };
  const entries = Array.isArray(value) ? value.map((v) => ["", v] as const) : Object.entries(value);
  const out = {
    depth: depth + 1,
    containers: 1,
    members: Array.isArray(value) ? 0 : entries.length,
    nul: false,
    lone: false,
  };
  for (const [key, child] of entries) {
    const inner = measured(child, depth + 1);
    out.depth = Math.max(out.depth, inner.depth);
    out.containers += inner.containers;
    out.members = Math.max(out.members, inner.members);
    out.nul ||= inner.nul || key.includes("\0");
    out.lone ||= inner.lone || lone(key);
  }
  return out;
}

test("scanJson agrees with the parsed value on generated JSON, escapes and quotes included", () => {
  const text = fc.string({
    unit: fc.constantFrom("a", '"', "\\", "\0", "\uD800", "\uDC00", "u", "é", "😀", "\n"),
  });
  fc.assert(
    fc.property(
      fc.jsonValue({ maxDepth: 4, stringUnit: fc.constantFrom("a", '"', "\\", "\0", "\uD800", "u", "😀") }),
      text,
      fc.constantFrom(0, 2),
      (value, key, gap) => {
        const body = JSON.stringify({ [key]: value, k: [key] }, null, gap);
        const scan = scanJson(body);
        const truth = measured(JSON.parse(body));
        assert.equal(scan.depth, truth.depth, body);
        assert.equal(scan.containers, truth.containers, body);
        assert.equal(scan.members, truth.members, body);
        assert.equal(scan.nul, truth.nul, body);
        if (truth.lone) assert.ok(scan.surrogateEscape, body);
        // The quick measure of a short body decides as the full scan would: it answers only when
        // no bound can be broken, with counts no lower than the exact ones and every flag the scan
        // raises.
        const quick = quickScan(body);
        if (quick) {
          assert.ok(quick.depth >= scan.depth && quick.depth <= MAX_JSON_DEPTH, body);
          assert.ok(quick.containers >= scan.containers && scan.members <= MAX_JSON_MEMBERS, body);
          for (const flag of ["nul", "surrogateEscape", "hugeNumber"] as const) {
            if (scan[flag]) assert.ok(quick[flag], `${flag}: ${body}`);
          }
        }
      },
    ),
    { numRuns: 2000 },
  );
});

test("a batch body parsed in pieces is the batch parsed whole; refusals name the limit", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const post = (url: string, payload: string) =>
    app.inject({
      method: "POST",
      url,
      headers: { ...a.headers, "content-type": "application/json" },
      payload,
    });
  // Over a MiB, with whitespace and a key after the array: every document signs, in order.
  const invoices = Array.from({ length: 400 }, (_, i) => {
    const doc = fixture("invoice-full", a);
    doc.irn = `P${i}-${a.service_id}-20261115`;
    return doc;
  });
  const text = JSON.stringify({ invoices, note: "after" }, null, 2);
  assert.ok(text.length > 1024 * 1024);
  const res = await post("/api/v1/einvoice/batch/sign", text);
  assert.equal(res.statusCode, 200, res.body);
  const results = res.json().data as { index: number; irn: string; status: string }[];
  assert.deepEqual(
    results.map((r) => [r.index, r.irn, r.status]),
    invoices.map((d, i) => [i, d.irn, "signed"]),
  );
  // Malformed inside a piece: the whole parse's error.
  const broken = `${text.slice(0, text.length - 40)}}`;
  const bad = await post("/api/v1/einvoice/batch/sign", broken);
  assert.equal(bad.statusCode, 400, bad.body);
  // A prototype key in a document is refused in pieces as it is whole.
  const proto = text.replace('"irn": "P7-', '"__proto__": {"x": 1}, "irn": "P7-');
  assert.equal((await post("/api/v1/einvoice/batch/sign", proto)).statusCode, 400);

  const wide = Object.fromEntries(Array.from({ length: MAX_JSON_MEMBERS + 1 }, (_, i) => [`k${i}`, 0]));
  const members = await post(
    "/api/v1/einvoice/validate",
    JSON.stringify({ ...fixture("invoice-minimal", a), ...wide }),
  );
  assert.equal(members.statusCode, 400);
  assert.match(members.json().error.details, /1,0\d\d members; at most 1,000 are accepted/);
  const objects = await post("/api/v1/einvoice/validate", `{"x":[${"{},".repeat(250_000)}{}]}`);
  assert.equal(objects.statusCode, 400);
  assert.match(objects.json().error.details, /objects and arrays; at most 200,000/);
});

test("prototype keys are refused however they are spelled, and the words elsewhere are text", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const validate = (payload: string) =>
    app.inject({
      method: "POST",
      url: "/api/v1/einvoice/validate",
      headers: { ...a.headers, "content-type": "application/json" },
      payload,
    });
  const text = JSON.stringify(fixture("invoice-full", a));
  const refused = await validate(text.replace('"irn":', '"__proto__":{"x":1},"irn":'));
  assert.equal(refused.statusCode, 400, refused.body);
  for (const key of ["\\u005f_proto__", "_\\u005Fproto__", "constructor", "\\u0063onstructor"]) {
    const res = await validate(text.replace('"irn":', `"${key}":{"prototype":{}},"irn":`));
    assert.equal(res.statusCode, 400, key);
    assert.equal(res.json().error.details, refused.json().error.details, key);
  }
  // The words as values, and an escape elsewhere: read as any other text.
  const note = JSON.stringify({
    ...fixture("invoice-full", a),
    note: "__proto__ constructor é",
  }).replace("é", "\\u00e9");
  const accepted = await validate(note);
  assert.equal(accepted.statusCode, 200, accepted.body);
  assert.equal((await validate(text)).statusCode, 200);
});

test("a body that starts with a byte order mark is read as without it, by validate and sign alike", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const post = (route: string, payload: string) =>
    app.inject({
      method: "POST",
      url: `/api/v1/einvoice/${route}`,
      headers: { ...a.headers, "content-type": "application/json; charset=utf-8" },
      payload,
    });
  // Checked on the preparation thread, which parses the body's text again.
  const empty = await post("validate", "\uFEFF{}");
  assert.equal(empty.statusCode, 400, empty.body);
  assert.equal(empty.json().message, "Failed to validate invoice");
  const doc = fixture("invoice-full", a);
  doc.irn = `BOM1-${a.service_id}-20261115`;
  const validated = await post("validate", `\uFEFF${JSON.stringify(doc)}`);
  assert.equal(validated.statusCode, 200, validated.body);
  const signed = await post("sign", `\uFEFF${JSON.stringify(doc)}`);
  assert.equal(signed.statusCode, 200, signed.body);
});
