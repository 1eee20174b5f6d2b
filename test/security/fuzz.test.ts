import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import v8 from "node:v8";
import vm from "node:vm";
import zlib from "node:zlib";
import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import {
  build,
  fixture,
  freshInvoice,
  HS_CSV,
  ISIC_JSON,
  ISO_TIMESTAMP,
  type Json,
  tenant,
} from "../helpers.ts";

/**
 * "Bad input never breaks it": generated requests against every endpoint that takes input. Whatever
 * comes in, the answer is below 500, is JSON, is the spec's error envelope when it is a failure and a
 * success envelope when it is a 200; wrong credentials never succeed and the API secret never
 * echoes back. Afterwards the service still answers its health check and has not kept the inputs.
 *
 * About 1,000 requests by default, on each engine with a seed of its own (so the suite sends about
 * 2,000 different ones, as it did on one engine before it had to fit in five minutes an engine);
 * EINVOICE_FUZZ_RUNS=20000 for a long run, EINVOICE_FUZZ_SEED to replay a run (fast-check prints
 * the seed of a failure).
 */

const API = "/api/v1/einvoice";
const BODY_LIMIT = 1024 * 1024;
const TOTAL = positiveInt("EINVOICE_FUZZ_RUNS") ?? 1000;
const SEED = process.env.EINVOICE_FUZZ_SEED ? Number(process.env.EINVOICE_FUZZ_SEED) : undefined;
/** One request answering later than this is broken too (a hang or a quadratic rule). */
const SLOW_MS = 10_000;
/** The JS heap may grow by this much over the whole run, after a collection (caches, JIT, pools). */
const HEAP_ALLOWANCE = 32 * 1024 * 1024;

function positiveInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return n;
}

// ---------------------------------------------------------------------------------------------------
// Values: JSON, plus literal JSON text (numbers JSON.stringify cannot write, deep nesting, long text)

/** JSON text spliced in as is; prints as its short label when fast-check reports a counterexample. */
class Lit {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}
  [fc.toStringMethod](): string {
    return `Lit(${this.label})`;
  }
}

const NESTINGS = ["array", "object", "mixed", "unclosed"] as const;
const OPS = ["delete", "replace", "replace", "replace", "extra", "wrap"] as const;

type Fuzz = null | boolean | number | string | Lit | Fuzz[] | { [key: string]: Fuzz };
type Path = (string | number)[];

const isRecord = (v: Fuzz | undefined): v is { [key: string]: Fuzz } =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Lit);

/** An own property even for `__proto__`, so the key reaches the wire. */
function setOwn(target: { [key: string]: Fuzz }, key: string, value: Fuzz): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function clone(v: Fuzz): Fuzz {
  if (Array.isArray(v)) return v.map(clone);
  if (isRecord(v)) {
    const out: { [key: string]: Fuzz } = {};
    for (const [k, c] of Object.entries(v)) setOwn(out, k, clone(c));
    return out;
  }
  return v;
}

const fromJson = (j: Json): Fuzz => JSON.parse(JSON.stringify(j)) as Fuzz;

function toJson(value: Fuzz): string {
  const spliced: string[] = [];
  const mark = "@@lit-5f1c9a@@";
  const text = JSON.stringify(value, (_key, v: unknown) =>
    v instanceof Lit ? `${mark}${spliced.push(v.text) - 1}${mark}` : v,
  );
  return text.replace(new RegExp(`"${mark}(\\d+)${mark}"`, "g"), (_m, i: string) => spliced[Number(i)] ?? "");
}

function longString(unit: string, count: number): Lit {
  return new Lit(JSON.stringify(unit.repeat(count)), `${JSON.stringify(unit)} x ${count}`);
}

/** Nesting as JSON text: `depth` levels of arrays, objects, both, or unclosed brackets. */
function nested(kind: (typeof NESTINGS)[number], depth: number): Lit {
  const half = Math.ceil(depth / 2);
  const text =
    kind === "array"
      ? `${"[".repeat(depth)}${"]".repeat(depth)}`
      : kind === "object"
        ? `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`
        : kind === "mixed"
          ? `${'[{"a":'.repeat(half)}null${"}]".repeat(half)}`
          : "[".repeat(depth);
  return new Lit(text, `${kind} nested ${depth} deep`);
}

/** Real nested values (JSON.stringify writes them), around the depths a parser guard would pick. */
function nestedValue(depth: number, leaf: Fuzz, objects: boolean): Fuzz {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = objects ? { a: v } : [v];
  return v;
}

const SPECIAL_STRINGS = [
  "",
  " ",
  "' OR 1=1 --",
  "' OR '1'='1",
  '"; DROP TABLE invoices; --',
  "'; DROP TABLE invoices; --",
  "1; SELECT pg_sleep(30)",
  "' UNION SELECT api_key, secret_hash FROM api_keys --",
  "../../etc/passwd",
  "..\\..\\windows\\win.ini",
  "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
  "%00",
  "\u0000",
  "a\u0000b",
  "\\u0000",
  "%",
  "\\",
  "<script>alert(1)</script>",
  "$\u007bjndi:ldap://x/a}", // a log4j-style lookup
  "{{7*7}}",
  "$(id)",
  "😀",
  "👩‍👩‍👧‍👦",
  "🇳🇬",
  "\u202e\u202d",
  "\ufeff",
  "\u200b",
  "\u2028\u2029",
  "\r\n",
  "中文",
  "عربى",
  "\ud800",
  "\udfff",
  "\udc00\ud800",
  "a\ud83dz",
  "null",
  "true",
  "[]",
  "{}",
  "NaN",
  "Infinity",
  "-0",
  "1e308",
  "-1e308",
  "0x10",
  "9".repeat(400),
  "2026-02-30",
  "9999-12-31",
  "0000-00-00",
  "NG-XX",
  "STANDARD_VAT",
  "PAID",
  "pending",
  "__proto__",
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

const stringArb: fc.Arbitrary<Fuzz> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
  { weight: 2, arbitrary: fc.string() },
  { weight: 2, arbitrary: fc.string({ unit: "binary" }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme" }) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: fc.oneof(loneSurrogate, fc.constantFrom("a", "😀", "\u0301")) }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom("x", "é", "😀", "\ud800", "'", "%", "\u0000"),
        fc.integer({ min: 1000, max: 120_000 }),
      )
      .map(([unit, n]) => longString(unit, n)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("x", "é", "😀", "\ud800", "0"), fc.integer({ min: 50, max: 1100 }))
      .map(([unit, n]) => unit.repeat(n)),
  },
);

const RAW_NUMBERS = [
  "-0",
  "1e309",
  "-1e309",
  "1e-400",
  "1E+2",
  "-0.0",
  "0.000",
  "1.0e0",
  "-0e-0",
  "00",
  "01",
];

const numberArb: fc.Arbitrary<Fuzz> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      1e308,
      -1e308,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
      -Number.MIN_VALUE,
      0,
      -1,
      0.1 + 0.2,
      1e-7,
      1e21,
      2 ** 53 + 2,
      2 ** 63,
      2 ** 64,
      Number.MAX_SAFE_INTEGER,
    ),
  },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((t) => new Lit(t, t)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom("9", "1234567890", "0"), fc.integer({ min: 20, max: 4000 }), fc.boolean())
      .map(([digits, n, fraction]) => {
        const body = digits.repeat(Math.ceil(n / digits.length)).slice(0, n);
        const text = fraction ? `0.${body}1` : `-${body.replace(/^0+/, "") || "0"}`;
        return new Lit(text, `${fraction ? "fraction" : "integer"} of ${n} digits`);
      }),
  },
);

const valueArb: fc.Arbitrary<Fuzz> = fc.oneof(
  { weight: 5, arbitrary: stringArb },
  { weight: 4, arbitrary: numberArb },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom<Fuzz>([], {}, [[]], [{}], [null], { "": null }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => v as Fuzz) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 2, max: 80 }), fc.boolean())
      .map(([depth, objects]) => nestedValue(depth, "x", objects)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...NESTINGS), fc.integer({ min: 1000, max: 50_000 }))
      .map(([kind, depth]) => nested(kind, depth)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom<Fuzz>({}, 0, "x", null, [], { hsn_code: "2523.29" }),
        fc.integer({ min: 100, max: 20_000 }),
      )
      .map(
        ([leaf, n]) =>
          new Lit(`[${Array.from({ length: n }, () => toJson(leaf)).join(",")}]`, `${n} x ${toJson(leaf)}`),
      ),
  },
);

const KNOWN_KEYS = [
  "business_id",
  "irn",
  "issue_date",
  "invoice_line",
  "note",
  "payment_status",
  "reference",
  "code",
  "certificate",
  "public_key",
  "tin",
  "amount",
  "hsn_code",
  "__proto__",
  "constructor",
  "prototype",
  "",
  "toString",
  "hasOwnProperty",
];
const keyArb = fc.oneof(
  fc.constantFrom(...KNOWN_KEYS),
  fc.string(),
  fc.string({ unit: "binary" }),
  loneSurrogate,
);

type Mutation = { at: number; op: (typeof OPS)[number]; key: string; value: Fuzz };

const mutationArb = (values: fc.Arbitrary<Fuzz>): fc.Arbitrary<Mutation> =>
  fc.record({
    at: fc.nat(),
    op: fc.constantFrom(...OPS),
    key: keyArb,
    value: values,
  });

function pathsOf(root: Fuzz): Path[] {
  const out: Path[] = [];
  const stack: [Fuzz, Path][] = [[root, []]];
  for (let next = stack.pop(); next !== undefined && out.length < 5000; next = stack.pop()) {
    const [v, p] = next;
    out.push(p);
    if (Array.isArray(v)) for (const [i, c] of v.entries()) stack.push([c, [...p, i]]);
    else if (isRecord(v)) for (const [k, c] of Object.entries(v)) stack.push([c, [...p, k]]);
  }
  return out;
}

function childOf(v: Fuzz | undefined, key: string | number): Fuzz | undefined {
  if (Array.isArray(v) && typeof key === "number") return v[key];
  if (isRecord(v) && typeof key === "string") return Object.hasOwn(v, key) ? v[key] : undefined;
  return undefined;
}

/** Applies one mutation at the path `at` points to (modulo the number of paths); returns the root. */
function mutate(root: Fuzz, m: Mutation): Fuzz {
  const all = pathsOf(root);
  const path = all[m.at % all.length] ?? [];
  const value = clone(m.value);
  const current = path.reduce<Fuzz | undefined>((v, k) => childOf(v, k), root);
  const extended = (cur: Fuzz | undefined): Fuzz => {
    if (isRecord(cur)) {
      setOwn(cur, m.key, value);
      return cur;
    }
    if (Array.isArray(cur)) return [...cur, value];
    const wrapper: { [key: string]: Fuzz } = {};
    setOwn(wrapper, m.key, value);
    return wrapper;
  };
  const replacement = (): Fuzz | undefined =>
    m.op === "replace"
      ? value
      : m.op === "wrap"
        ? [current ?? null]
        : m.op === "extra"
          ? extended(current)
          : undefined;
  const last = path[path.length - 1];
  if (last === undefined) return replacement() ?? {};
  const parent = path.slice(0, -1).reduce<Fuzz | undefined>((v, k) => childOf(v, k), root);
  const next = replacement();
  if (Array.isArray(parent) && typeof last === "number") {
    if (next === undefined) parent.splice(last, 1);
    else parent[last] = next;
  } else if (isRecord(parent) && typeof last === "string") {
    if (next === undefined) delete parent[last];
    else setOwn(parent, last, next);
  }
  return root;
}

/** Any text at all, of any length up to past the longest field limit. */
const textArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_STRINGS.filter((s) => s.length > 0 && s.length < 100)) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }) },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.oneof(loneSurrogate, fc.constantFrom("a", "😀", "\u0301", "'", "\u202e")),
      minLength: 1,
      maxLength: 20,
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom("c", "é", "😀"), fc.integer({ min: 1, max: 1100 }))
      .map(([unit, n]) => unit.repeat(n)),
  },
);

/** Fields whose content is free text (no format, no code list). */
const FREE_TEXT =
  /(^|\.)(note|party_name|street_name|city_name|business_description|name|description|sellers_item_identification|order_reference|payment_terms_note|price_unit|product_category|item_description|reference|certificate)$/;

/**
 * Puts `text` in free-text fields of a valid body, which stays valid (up to the field's length limit),
 * so odd text reaches every layer: signature, encryption, database, QR code. Returns what changed.
 */
function editFreeText(body: Fuzz, edits: readonly [number, string][]): string {
  const texts = pathsOf(body).filter((p) => FREE_TEXT.test(p.join(".")));
  const changed: string[] = [];
  for (const [at, text] of edits) {
    const path = texts[at % Math.max(1, texts.length)];
    const last = path?.[path.length - 1];
    const parent = path?.slice(0, -1).reduce<Fuzz | undefined>((v, k) => childOf(v, k), body);
    if (isRecord(parent) && typeof last === "string") {
      setOwn(parent, last, text);
      changed.push(`${path?.join(".")} = ${clip(text, 60)}`);
    }
  }
  return changed.length > 0 ? `a valid body with ${changed.join(", ")}` : "";
}

// ---------------------------------------------------------------------------------------------------
// Requests and the property every answer must satisfy

type Shape = "action" | "irn" | "products" | "reference" | "health";
type Auth = "valid" | "invalid";
type FuzzRequest = {
  method: "GET" | "POST" | "PATCH";
  url: string;
  headers: Record<string, string | string[]>;
  payload?: string | Buffer;
  shape: Shape;
  auth: Auth;
  /** What was changed, when the body is too long to show where. */
  note?: string;
};

const clip = (text: string, n = 300) =>
  JSON.stringify(text.length > n ? `${text.slice(0, n)}… (${text.length} chars)` : text);

function describe(req: FuzzRequest): string {
  const headers = Object.fromEntries(
    Object.entries(req.headers).map(([k, v]) => [
      k,
      k === "api-secret" ? "<secret>" : Array.isArray(v) ? v.map((x) => x.slice(0, 80)) : v.slice(0, 120),
    ]),
  );
  const payload =
    req.payload === undefined
      ? "(no body)"
      : Buffer.isBuffer(req.payload)
        ? `Buffer(${req.payload.length}) ${clip(req.payload.toString("latin1"))} hex ${req.payload.subarray(0, 48).toString("hex")}`
        : `(${Buffer.byteLength(req.payload)} bytes) ${clip(req.payload)}`;
  const note = req.note ? ` (${req.note})` : "";
  return `${req.method} ${clip(req.url, 400)} auth=${req.auth} headers=${JSON.stringify(headers)} body=${payload}${note}`;
}

const ERROR_KEYS = new Set(["status", "code", "message", "data", "error", "timestamp"]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkSuccess(body: Record<string, unknown>, shape: Shape, say: (m: string) => string): void {
  switch (shape) {
    case "action":
      assert.equal(body.status, true, say("status true"));
      assert.equal(body.code, 200, say("code 200"));
      assert.equal(typeof body.message, "string", say("message"));
      assert.ok(Array.isArray(body.data) || isObject(body.data), say("data is an array or object"));
      return;
    case "irn":
      assert.equal(body.code, 200, say("code 200"));
      assert.deepEqual(body.data, { ok: true }, say("data {ok:true}"));
      return;
    case "products":
      for (const k of ["draw", "recordsTotal", "recordsFiltered"]) {
        assert.equal(typeof body[k], "number", say(`${k} is a number`));
      }
      assert.ok(Array.isArray(body.data), say("data is an array"));
      return;
    case "reference":
      assert.equal(body.code, 200, say("code 200"));
      assert.ok(Array.isArray(body.data), say("data is an array"));
      return;
    case "health":
      assert.deepEqual(body, { code: 200, data: null, message: "API is healthy" }, say("health body"));
  }
}

/** The property every answer must have; `secret` must never come back. */
function verify(
  req: FuzzRequest,
  res: LightMyRequestResponse,
  ms: number,
  secret: string,
  limitMs = SLOW_MS,
): void {
  const got = `${res.statusCode} ${String(res.headers["content-type"] ?? "(no content-type)")} ${clip(res.body, 500)}`;
  const say = (what: string) => `${what}\n  request: ${describe(req)}\n  answer:  ${got}`;
  assert.ok(ms < limitMs, say(`answered in ${Math.round(ms)} ms`));
  assert.ok(res.statusCode < 500, say("a 5xx"));
  assert.match(String(res.headers["content-type"]), /^application\/json/, say("content-type is JSON"));
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    assert.fail(say("the body is not JSON"));
  }
  assert.ok(isObject(body), say("the body is a JSON object"));
  assert.ok(!res.body.includes(secret), say("the API secret is echoed back"));
  if (res.statusCode >= 400) {
    assert.equal(body.status, false, say("error envelope: status false"));
    assert.equal(body.code, res.statusCode, say("error envelope: code is the HTTP status"));
    assert.equal(typeof body.message, "string", say("error envelope: message is a string"));
    assert.ok(String(body.message).length > 0, say("error envelope: message is not empty"));
    assert.equal(body.data, null, say("error envelope: data null"));
    assert.match(String(body.timestamp), ISO_TIMESTAMP, say("error envelope: ISO 8601 timestamp with ms"));
    for (const k of Object.keys(body)) assert.ok(ERROR_KEYS.has(k), say(`unexpected key '${k}' in an error`));
    if (res.statusCode !== 404 || "error" in body) {
      assert.ok(typeof body.error === "object" && body.error !== null, say("error envelope: error object"));
    }
    if (res.statusCode === 401)
      assert.deepEqual(Object.keys(body.error as object), ["details"], say("401 error"));
  } else {
    assert.equal(res.statusCode, 200, say("a success is a 200"));
    checkSuccess(body, req.shape, say);
  }
  if (req.auth === "invalid")
    assert.notEqual(res.statusCode, 200, say("succeeded without valid credentials"));
  else assert.notEqual(res.statusCode, 401, say("valid credentials refused"));
}

// ---------------------------------------------------------------------------------------------------

test("bad input never breaks it: fuzzed requests to every endpoint that takes input", {
  timeout: Math.max(600_000, TOTAL * 300),
}, async (t: TestContext) => {
  const { app, ctx } = await build(t);
  await ctx.reference.importProducts(HS_CSV);
  await ctx.reference.importServices(ISIC_JSON);
  const who = await tenant(ctx);
  const other = await tenant(ctx);
  const revoked = await tenant(ctx);
  await ctx.businesses.revokeKey(revoked.api_key);
  const business = await ctx.businesses.find(who.business_id);
  assert.ok(business);
  const publicKey = Buffer.from(ctx.qr.publicKeyPem).toString("base64");

  // A few signed invoices to aim at: lookups, transmit, update, reports and QR codes of real IRNs.
  const signed: string[] = [];
  for (const base of ["invoice-full", "invoice-minimal", "invoice-full", "invoice-minimal"] as const) {
    const doc = freshInvoice(who, base);
    const res = await app.inject({ method: "POST", url: `${API}/sign`, headers: who.headers, payload: doc });
    assert.equal(res.statusCode, 200, res.body);
    signed.push(String(doc.irn));
  }
  const qrCodes: string[] = [];
  for (const irn of signed) {
    const res = await app.inject({ url: `${API}/${irn}`, headers: who.headers });
    assert.equal(res.statusCode, 200, res.body);
    qrCodes.push(String((res.json() as { data: { qr_code: string } }).data.qr_code));
  }
  const pick = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;

  let requests = 0;
  let bytesRead = 0;
  let slowest = 0;
  const statuses = new Map<number, number>();

  async function send(req: FuzzRequest): Promise<void> {
    requests += 1;
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const res = await Promise.race([
      app.inject({
        method: req.method,
        url: req.url,
        headers: req.headers,
        ...(req.payload === undefined ? {} : { payload: req.payload }),
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${SLOW_MS} ms: ${describe(req)}`)),
          SLOW_MS,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const ms = performance.now() - started;
    slowest = Math.max(slowest, ms);
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    if (req.auth === "valid" && req.payload !== undefined) {
      const size = Buffer.byteLength(req.payload);
      if (size <= BODY_LIMIT) bytesRead += size;
    }
    verify(req, res, ms, who.api_secret);
  }

  // Targets: every endpoint that takes a body, with a valid body to mutate.
  type Target = {
    name: string;
    method: "POST" | "PATCH";
    url: (i: number) => string;
    shape: Shape;
    template: (i: number) => Fuzz;
  };
  const invoice = (i: number) =>
    fromJson(freshInvoice(who, i % 2 === 0 ? "invoice-full" : "invoice-minimal"));
  const targets: Target[] = [
    { name: "validate", method: "POST", url: () => `${API}/validate`, shape: "action", template: invoice },
    { name: "sign", method: "POST", url: () => `${API}/sign`, shape: "action", template: invoice },
    {
      name: "sign-transmit",
      method: "POST",
      url: () => `${API}/sign-transmit`,
      shape: "action",
      template: invoice,
    },
    {
      name: "batch/sign",
      method: "POST",
      url: () => `${API}/batch/sign`,
      shape: "action",
      template: () => fromJson({ invoices: [freshInvoice(who, "invoice-minimal"), freshInvoice(who)] }),
    },
    {
      name: "irn/validate",
      method: "POST",
      url: () => `${API}/irn/validate`,
      shape: "irn",
      template: (i) => ({ irn: `FZ${i}-${who.service_id}-20261116`, business_id: who.business_id }),
    },
    {
      name: "qr-code/validate",
      method: "POST",
      url: () => `${API}/qr-code/validate`,
      shape: "action",
      template: (i) => ({ code: pick(qrCodes, i) }),
    },
    {
      name: "qr-code/create",
      method: "POST",
      url: () => `${API}/qr-code/create`,
      shape: "action",
      template: (i) => ({ public_key: publicKey, certificate: business.certificate, irn: pick(signed, i) }),
    },
    {
      name: "report-fiscalization",
      method: "POST",
      url: () => `${API}/report-fiscalization`,
      shape: "action",
      template: (i) => fromJson({ ...fixture("report-fiscalization", who), irn: pick(signed, i) }),
    },
    {
      name: "update",
      method: "PATCH",
      url: (i) => `${API}/update/${pick(signed, i)}`,
      shape: "action",
      template: (i) => ({
        payment_status: pick(["PENDING", "PARTIAL", "PAID", "REJECTED"], i),
        reference: `REF-${i % 7}`,
        amount: pick([0.01, 25.5, 0.1 + 0.2, 13975, 1e15], i),
        payment_update_date: pick(["2026-11-16", "2026-11-20"], i),
      }),
    },
  ];

  const credentials = (valid: boolean): Pick<FuzzRequest, "headers" | "auth"> =>
    valid ? { headers: { ...who.headers }, auth: "valid" } : { headers: {}, auth: "invalid" };
  const json = { "content-type": "application/json" };

  const weights = {
    body: 10, // per target
    raw: 8,
    utf8: 5,
    deep: 5,
    numbers: 5,
    big: 24,
    get: 6, // per GET endpoint
    badUrl: 3,
    longParam: 2,
    credentials: 6,
  };
  const weightSum =
    weights.body * targets.length +
    weights.raw +
    weights.utf8 +
    weights.deep +
    weights.numbers +
    weights.big +
    weights.get * 6 +
    weights.badUrl +
    weights.longParam +
    weights.credentials;
  const runs = (w: number) => Math.max(5, Math.round((TOTAL * w) / weightSum));

  async function property<T>(
    name: string,
    w: number,
    arb: fc.Arbitrary<T>,
    toRequest: (v: T) => FuzzRequest,
  ) {
    await t.test(name, async () => {
      await fc.assert(
        fc.asyncProperty(arb, async (v) => {
          await send(toRequest(v));
        }),
        { numRuns: runs(w), includeErrorInReport: true, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
    });
  }

  // Warm-up (schemas compiled, JIT, pools), then the heap before the run.
  for (const [i, target] of targets.entries()) {
    for (const valid of [true, false]) {
      await send({
        method: target.method,
        url: target.url(i),
        ...credentials(valid),
        headers: { ...credentials(valid).headers, ...json },
        payload: toJson(target.template(i)),
        shape: target.shape,
      });
    }
  }
  const gc = collector();
  const before = heapAfterCollection(gc);

  // 1. Per endpoint: mutated valid bodies, wrong types, missing and extra fields, any JSON at all,
  // and valid bodies with any text in their free-text fields.
  for (const target of targets) {
    const mutations = fc.oneof(
      { weight: 6, arbitrary: fc.array(mutationArb(valueArb), { minLength: 1, maxLength: 6 }) },
      { weight: 1, arbitrary: fc.array(mutationArb(valueArb), { minLength: 10, maxLength: 40 }) },
      { weight: 1, arbitrary: fc.constant<Mutation[]>([]) },
      {
        weight: 2,
        arbitrary: valueArb.map((value): Mutation[] => [{ at: 0, op: "replace", key: "", value }]),
      },
    );
    const edits = fc.array(fc.tuple(fc.nat(), textArb), { minLength: 1, maxLength: 4 });
    await property(
      `${target.method} ${target.name}: mutated bodies, any JSON, any text in valid bodies`,
      weights.body,
      fc.record({
        i: fc.nat(),
        change: fc.oneof(
          { weight: 2, arbitrary: mutations.map((list) => ({ mutations: list })) },
          { weight: 1, arbitrary: edits.map((list) => ({ edits: list })) },
        ),
        valid: fc.nat(19).map((n) => n > 0),
        type: fc.nat(3),
      }),
      ({ i, change, valid, type }) => {
        let body = target.template(i);
        let note = "";
        if ("edits" in change) note = editFreeText(body, change.edits);
        else body = change.mutations.reduce(mutate, body);
        const contentType = pick(
          [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            "application/json;charset=UTF-8",
          ],
          type,
        );
        const auth = credentials(valid);
        return {
          method: target.method,
          url: target.url(i),
          ...auth,
          headers: { ...auth.headers, "content-type": contentType },
          payload: toJson(body),
          shape: target.shape,
          note,
        };
      },
    );
  }

  const targetArb = fc.nat(targets.length - 1).map((n) => targets[n] as Target);

  // 2. Wrong content types, empty bodies, JSON that is not an object, not JSON at all.
  const CONTENT_TYPES = [
    undefined,
    "application/json",
    "text/plain",
    "text/plain; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=----fuzz",
    "application/xml",
    "text/html",
    "application/octet-stream",
    "application/json; charset=utf-16le",
    "application/json; charset=iso-8859-1",
    "APPLICATION/JSON",
    "application/vnd.api+json",
    "application/json-patch+json",
    "application/jsonx",
    "*/*",
    "",
    "garbage",
    "application/json, text/plain",
    ";",
    'application/json; charset="utf-8"; boundary=x',
  ];
  const NOT_OBJECTS = [
    "",
    " ",
    "\n",
    "[]",
    "null",
    '"x"',
    "42",
    "true",
    "-0",
    "1e309",
    "{",
    "}",
    "[",
    '"',
    "nul",
    '{"a":1,}',
    "{'a':1}",
    "{a:1}",
    "// comment",
    "\ufeff{}",
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"a":1}{"b":2}',
    '{"a":"\\x41"}',
    '{"a":"\\ud800"}',
    '{"a":"\u0000"}',
    '{"a":"\\u0000"}',
  ];
  const rawPayloadArb = fc.oneof(
    fc.constant<string | Buffer | undefined>(undefined),
    fc.constantFrom<string | Buffer | undefined>(...NOT_OBJECTS),
    fc.constant<string | Buffer | undefined>("business_id=x&irn=INV1-ABCDEFGH-20260101&payment_status=PAID"),
    fc.constant<string | Buffer | undefined>(
      '------fuzz\r\nContent-Disposition: form-data; name="irn"\r\n\r\nINV1\r\n------fuzz--\r\n',
    ),
    fc.uint8Array({ maxLength: 2048 }).map((b) => Buffer.from(b)),
    fc.string({ maxLength: 500 }),
  );
  await property(
    "content types, empty bodies, non-object JSON",
    weights.raw,
    fc.record({
      target: targetArb,
      i: fc.nat(),
      type: fc.constantFrom(...CONTENT_TYPES),
      payload: fc.oneof(
        rawPayloadArb,
        fc.nat().map((i) => toJson(pick(targets, i).template(i)) as string | Buffer | undefined),
      ),
      truncate: fc.option(fc.nat(), { nil: undefined }),
    }),
    ({ target, i, type, payload, truncate }) => ({
      method: target.method,
      url: target.url(i),
      auth: "valid",
      headers: { ...who.headers, ...(type === undefined ? {} : { "content-type": type }) },
      ...(payload === undefined
        ? {}
        : { payload: truncate === undefined ? payload : payload.slice(0, truncate % (payload.length + 1)) }),
      shape: target.shape,
    }),
  );

  // 3. Invalid UTF-8 in a raw Buffer, inside strings or between tokens of a valid body.
  const INVALID_UTF8 = [
    [0xff],
    [0xfe, 0xff],
    [0xc0, 0xaf],
    [0xe0, 0x80, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xed, 0xbf, 0xbf],
    [0xf4, 0x90, 0x80, 0x80],
    [0xf8, 0x88, 0x80, 0x80, 0x80],
    [0xe2, 0x82],
    [0x80],
    [0xc3],
    [0xf0, 0x9f, 0x98],
  ];
  await property(
    "invalid UTF-8 byte sequences",
    weights.utf8,
    fc.record({
      target: targetArb,
      i: fc.nat(),
      inserts: fc.array(fc.record({ at: fc.nat(), bytes: fc.constantFrom(...INVALID_UTF8) }), {
        minLength: 1,
        maxLength: 5,
      }),
    }),
    ({ target, i, inserts }) => {
      let bytes = Buffer.from(toJson(target.template(i)), "utf8");
      for (const { at, bytes: bad } of inserts) {
        // Mostly inside a string value (right after an opening quote), sometimes anywhere.
        const quotes = [...bytes.entries()].filter(([, b]) => b === 0x22).map(([k]) => k + 1);
        const where = at % 3 === 0 ? at % (bytes.length + 1) : pick(quotes.length > 0 ? quotes : [0], at);
        bytes = Buffer.concat([bytes.subarray(0, where), Buffer.from(bad), bytes.subarray(where)]);
      }
      return {
        method: target.method,
        url: target.url(i),
        auth: "valid",
        headers: { ...who.headers, ...json },
        payload: bytes,
        shape: target.shape,
      };
    },
  );

  // 4. Deep nesting: 1,000 to 300,000 levels, at the top or in any field.
  await property(
    "deeply nested arrays and objects",
    weights.deep,
    fc.record({
      target: targetArb,
      i: fc.nat(),
      at: fc.nat(),
      top: fc.boolean(),
      kind: fc.constantFrom(...NESTINGS),
      depth: fc.oneof(fc.integer({ min: 1000, max: 20_000 }), fc.integer({ min: 20_000, max: 300_000 })),
    }),
    ({ target, i, at, top, kind, depth }) => {
      const deep = nested(kind, depth);
      const body = top ? deep : mutate(target.template(i), { at, op: "replace", key: "", value: deep });
      return {
        method: target.method,
        url: target.url(i),
        auth: "valid",
        headers: { ...who.headers, ...json },
        payload: toJson(body),
        shape: target.shape,
      };
    },
  );

  // 5. Huge and odd numbers in every field: 1e308, -0, 1e309, thousands of digits.
  await property(
    "huge numbers, -0, very long digit strings",
    weights.numbers,
    fc.record({
      target: targetArb,
      i: fc.nat(),
      mutations: fc.array(
        mutationArb(numberArb).map((m): Mutation => ({ ...m, op: "replace" })),
        {
          minLength: 1,
          maxLength: 12,
        },
      ),
    }),
    ({ target, i, mutations }) => ({
      method: target.method,
      url: target.url(i),
      auth: "valid",
      headers: { ...who.headers, ...json },
      payload: toJson(mutations.reduce(mutate, target.template(i))),
      shape: target.shape,
    }),
  );

  // 6. Big bodies: very long strings and very many entries, just under and over the 1 MiB limit.
  await property(
    "very long strings and very large bodies",
    // However few the runs, enough of these for the heap check at the end to mean something: it
    // needs three times its allowance (96 MiB) of bodies read, and 130 of these read 68 MiB.
    Math.max(weights.big, (240 * weightSum) / TOTAL),
    fc.record({
      target: targetArb,
      i: fc.nat(),
      at: fc.nat(),
      unit: fc.constantFrom("x", "é", "😀", "\u2028", "'", "\\", "\ud800"),
      fill: fc.double({ min: 0.3, max: 1.15, noNaN: true }),
      lines: fc.boolean(),
    }),
    ({ target, i, at, unit, fill, lines }) => {
      const template = target.template(i);
      const base = toJson(template);
      const unitBytes = Buffer.byteLength(JSON.stringify(unit)) - 2;
      const room = Math.max(1, Math.floor((BODY_LIMIT * fill - base.length) / unitBytes));
      let body: Fuzz;
      if (lines && isRecord(template) && Array.isArray(template.invoice_line) && template.invoice_line[0]) {
        const line = toJson(template.invoice_line[0]);
        const n = Math.max(1, Math.floor((BODY_LIMIT * fill - base.length) / (line.length + 1)));
        setOwn(template, "invoice_line", new Lit(`[${Array(n).fill(line).join(",")}]`, `${n} invoice lines`));
        body = template;
      } else {
        body = mutate(template, { at, op: "replace", key: "", value: longString(unit, room) });
      }
      return {
        method: target.method,
        url: target.url(i),
        auth: "valid",
        headers: { ...who.headers, ...json },
        payload: toJson(body),
        shape: target.shape,
      };
    },
  );

  // 7. GET with fuzzed path parameters and query strings.
  const wellFormed = (s: string) =>
    s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
  const shortText = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_STRINGS.filter((s) => s.length <= 60)) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 10 }) },
  );
  /** Percent-encoded, at most 200 characters once encoded (the longest parameter the router takes). */
  const paramArb = fc.oneof(
    {
      weight: 4,
      arbitrary: shortText.map((s) =>
        encodeURIComponent(wellFormed(s))
          .slice(0, 200)
          .replace(/%[0-9A-F]?$/, ""),
      ),
    },
    { weight: 2, arbitrary: fc.nat().map((i) => pick(signed, i)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.nat(),
          fc.constantFrom("", "x", "%20", "'", "%27%20OR%201%3D1%20--", ".json", "%2F..", "%00"),
        )
        .map(([i, suffix]) => `${pick(signed, i)}${suffix}`),
    },
    { weight: 1, arbitrary: fc.nat().map((i) => pick(signed, i).toLowerCase()) },
    {
      weight: 1,
      arbitrary: fc.nat().map((i) => `${pick(signed, i).split("-")[0]}-${other.service_id}-20261115`),
    },
  );
  const NUMERIC_VALUES = [
    "0",
    "1",
    "-1",
    "-0",
    "1000",
    "1001",
    "1e308",
    "1e19",
    "99999999999999999999",
    "9223372036854775807",
    "18446744073709551616",
    "1e20",
    "123456789012345678901234567890",
    "9007199254740993",
    "0x10",
    "1.5",
    "NaN",
    "",
  ];
  const queryValue = fc.oneof(
    fc.constantFrom(...NUMERIC_VALUES, "Infinity", "true", "null"),
    shortText,
    fc.integer({ min: 100, max: 5000 }).map((n) => "a".repeat(n)),
  );
  const QUERY_KEYS = [
    "start",
    "length",
    "draw",
    "hscode",
    "description",
    "product_category",
    "search",
    "code",
  ];
  const queryPair = fc.oneof(
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom("start", "length", "draw"),
        fc.constantFrom(...NUMERIC_VALUES),
        fc.constant(2),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.oneof(fc.constantFrom(...QUERY_KEYS), fc.string({ maxLength: 10 })),
        queryValue,
        fc.nat(5),
      ),
    },
  );
  const queryArb = fc
    .oneof(
      { weight: 1, arbitrary: fc.array(queryPair, { maxLength: 8 }) },
      { weight: 1, arbitrary: fc.array(queryPair, { minLength: 1, maxLength: 2 }) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom("start", "length", "draw"), fc.constantFrom(...NUMERIC_VALUES))
          .map(([k, v]) => [[k, v, 2]] as [string, string, number][]),
      },
    )
    .map((pairs) =>
      pairs
        .map(([k, v, style]) =>
          style === 0
            ? encodeURIComponent(wellFormed(k))
            : style === 1
              ? `${encodeURIComponent(wellFormed(k))}=${v.replace(/[^A-Za-z0-9._~-]/g, "")}`
              : `${encodeURIComponent(wellFormed(k))}=${encodeURIComponent(wellFormed(v))}`,
        )
        .join("&"),
    );
  const gets: { name: string; url: (param: string, query: string) => string; shape: Shape }[] = [
    { name: "GET /{IRN}", url: (p, q) => `${API}/${p}${q ? `?${q}` : ""}`, shape: "action" },
    { name: "GET /{IRN}/simple", url: (p, q) => `${API}/${p}/simple${q ? `?${q}` : ""}`, shape: "action" },
    { name: "GET /lookup/{IRN}", url: (p, q) => `${API}/lookup/${p}${q ? `?${q}` : ""}`, shape: "action" },
    {
      name: "GET /transmit/{IRN}",
      url: (p, q) => `${API}/transmit/${p}${q ? `?${q}` : ""}`,
      shape: "action",
    },
    {
      name: "GET /resources/products?…",
      url: (_p, q) => `${API}/resources/products?${q}`,
      shape: "products",
    },
    {
      name: "GET /resources/services?…",
      url: (_p, q) => `${API}/resources/services?${q}`,
      shape: "reference",
    },
  ];
  for (const get of gets) {
    await property(
      `${get.name}: fuzzed path parameters and query strings`,
      weights.get,
      fc.record({ param: paramArb, query: queryArb, valid: fc.nat(19).map((n) => n > 0) }),
      ({ param, query, valid }) => ({
        method: "GET",
        url: get.url(param, query),
        ...credentials(valid),
        shape: get.shape,
      }),
    );
  }

  // 8. Path parameters with traversal and broken percent-encoding, sent as written.
  const RAW_PARAMS = [
    "../../etc/passwd",
    "..%2f..%2fetc%2fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%2e%2e/%2e%2e/etc/passwd",
    "..%252f..%252fetc%252fpasswd",
    "....//....//etc/passwd",
    "..\\..\\etc\\passwd",
    ".",
    "..",
    "%2e",
    "%00",
    "a%00b",
    "%2500",
    "%",
    "%zz",
    "%E0%A4%A",
    "%ED%A0%80",
    "%C0%AE%C0%AE%2F",
    "%FF",
    "a%2",
    "%u0041",
    "'%20OR%201=1%20--",
    "%22;%20DROP%20TABLE%20invoices;%20--",
  ];
  const rawUrlTargets: { url: (p: string) => string; method: "GET" | "PATCH"; shape: Shape }[] = [
    ...gets
      .slice(0, 4)
      .map((g) => ({ url: (p: string) => g.url(p, ""), method: "GET" as const, shape: g.shape })),
    { url: (p) => `${API}/update/${p}`, method: "PATCH", shape: "action" },
    { url: (p) => `${API}/resources/products?search=${p}`, method: "GET", shape: "products" },
    { url: (p) => `${API}/resources/services?${p}=1`, method: "GET", shape: "reference" },
  ];
  await property(
    "path traversal and malformed percent-encoding in the URL",
    weights.badUrl,
    fc.record({
      target: fc.nat(rawUrlTargets.length - 1),
      param: fc.constantFrom(...RAW_PARAMS),
      prefix: fc.constantFrom("", "INV1", "x-"),
    }),
    ({ target, param, prefix }) => {
      const where = rawUrlTargets[target] as (typeof rawUrlTargets)[number];
      return {
        method: where.method,
        url: where.url(`${prefix}${param}`),
        auth: "valid",
        headers: { ...who.headers, ...(where.method === "PATCH" ? json : {}) },
        ...(where.method === "PATCH" ? { payload: '{"payment_status":"PAID"}' } : {}),
        shape: where.shape,
      };
    },
  );

  // 9. Path parameters longer than any IRN (the router stops at 200 characters).
  await property(
    "over-long path parameters",
    weights.longParam,
    fc.record({
      target: fc.nat(4),
      length: fc.integer({ min: 101, max: 8000 }),
      unit: fc.constantFrom("A", "%41", "%F0%9F%98%80", "-"),
    }),
    ({ target, length, unit }) => {
      const where = rawUrlTargets[target] as (typeof rawUrlTargets)[number];
      return {
        method: where.method,
        url: where.url(unit.repeat(Math.ceil(length / unit.length))),
        auth: "valid",
        headers: { ...who.headers, ...(where.method === "PATCH" ? json : {}) },
        ...(where.method === "PATCH" ? { payload: '{"payment_status":"PAID"}' } : {}),
        shape: where.shape,
      };
    },
  );

  // 10. No credentials, wrong ones, half of them, a revoked key, another tenant's secret: never a 200.
  const headerText = fc.string({ maxLength: 300 }).map((s) => s.trim());
  const badCredentials = fc.oneof(
    fc.constant<Record<string, string | string[]>>({}),
    fc.constant<Record<string, string | string[]>>({ "api-key": who.api_key }),
    fc.constant<Record<string, string | string[]>>({ "api-secret": who.api_secret }),
    fc.constant<Record<string, string | string[]>>({ "api-key": who.api_key, "api-secret": "" }),
    fc.constant<Record<string, string | string[]>>({
      "api-key": who.api_key,
      "api-secret": other.api_secret,
    }),
    fc.constant<Record<string, string | string[]>>({
      "api-key": other.api_key,
      "api-secret": who.api_secret,
    }),
    fc.constant<Record<string, string | string[]>>(revoked.headers),
    fc.constant<Record<string, string | string[]>>({
      "api-key": who.api_key,
      "api-secret": `${who.api_secret.slice(0, -1)}${who.api_secret.endsWith("A") ? "B" : "A"}`,
    }),
    fc.constant<Record<string, string | string[]>>({
      "api-key": [other.api_key, who.api_key],
      "api-secret": who.api_secret,
    }),
    fc
      .tuple(
        fc.oneof(headerText, fc.constantFrom(...SPECIAL_STRINGS.filter((s) => /^[\x20-\x7e]*$/.test(s)))),
        headerText,
      )
      .map(([key, secret]): Record<string, string | string[]> => ({ "api-key": key, "api-secret": secret })),
  );
  const everyEndpoint = [
    ...targets.map((target) => ({
      method: target.method,
      url: target.url,
      shape: target.shape,
      body: target.template,
    })),
    ...gets.map((g) => ({
      method: "GET" as const,
      url: (i: number) => g.url(pick(signed, i), "start=0&length=5"),
      shape: g.shape,
      body: undefined,
    })),
    { method: "GET" as const, url: () => "/", shape: "health" as const, body: undefined },
  ];
  await property(
    "missing, wrong and revoked credentials",
    weights.credentials,
    fc.record({ endpoint: fc.nat(everyEndpoint.length - 1), i: fc.nat(), headers: badCredentials }),
    ({ endpoint, i, headers }) => {
      const e = everyEndpoint[endpoint] as (typeof everyEndpoint)[number];
      return {
        method: e.method,
        url: e.url(i),
        auth: "invalid",
        headers: { ...headers, ...(e.body ? json : {}) },
        ...(e.body ? { payload: toJson(e.body(i)) } : {}),
        shape: e.shape,
      };
    },
  );

  await t.test("afterwards: still healthy, and the inputs were not kept", async () => {
    const health = await app.inject({ method: "GET", url: "/", headers: who.headers });
    assert.equal(health.statusCode, 200, health.body);
    assert.deepEqual(health.json(), { code: 200, data: null, message: "API is healthy" });
    // The invoices signed before the run are still there and readable.
    for (const irn of signed) {
      const res = await app.inject({ url: `${API}/lookup/${irn}`, headers: who.headers });
      assert.equal(res.statusCode, 200, res.body);
    }

    // Injected requests without a body are let go of by a timer about a second after they end (a
    // light-my-request artefact, about 10 kB each, not the service's): measure once that has passed.
    let after = heapAfterCollection(gc);
    for (let attempt = 0; attempt < 5 && after.heapUsed - before.heapUsed >= HEAP_ALLOWANCE / 4; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      after = heapAfterCollection(gc);
    }
    const grown = after.heapUsed - before.heapUsed;
    const grownBuffers = after.arrayBuffers - before.arrayBuffers;
    t.diagnostic(
      `${requests} requests, ${(bytesRead / 2 ** 20).toFixed(0)} MiB of bodies read, slowest ${Math.round(slowest)} ms; ` +
        `heap ${(before.heapUsed / 2 ** 20).toFixed(1)} → ${(after.heapUsed / 2 ** 20).toFixed(1)} MiB, ` +
        `buffers ${(before.arrayBuffers / 2 ** 20).toFixed(1)} → ${(after.arrayBuffers / 2 ** 20).toFixed(1)} MiB; ` +
        `statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`,
    );
    // The test is only meaningful if far more went in than the heap may keep.
    assert.ok(
      bytesRead >= 3 * HEAP_ALLOWANCE,
      `only ${bytesRead} bytes of bodies were read: not enough to show a leak of the inputs`,
    );
    assert.ok(
      grown < HEAP_ALLOWANCE,
      `the heap grew by ${(grown / 2 ** 20).toFixed(1)} MiB over the run (after a collection), ` +
        `having read ${(bytesRead / 2 ** 20).toFixed(0)} MiB of bodies: requests are being kept`,
    );
    assert.ok(grownBuffers < HEAP_ALLOWANCE, `buffers grew by ${(grownBuffers / 2 ** 20).toFixed(1)} MiB`);
  });
});

/** A PNG chunk: length, type, data, CRC-32 of type and data. */
function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(typed) >>> 0);
  return Buffer.concat([head, typed, crc]);
}

/** A valid, all-white, 1-bit greyscale PNG: a few kilobytes that decode to width × height pixels. */
function whitePng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const row = Buffer.alloc(1 + Math.ceil(width / 8), 0xff);
  row[0] = 0; // filter: none
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) row.copy(raw, y * row.length);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    pngChunk("IDAT", zlib.deflateSync(raw, { level: 9 })),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** How long qr-code/validate may take to turn away an image far larger than any printed QR code. */
const IMAGE_MS = 2000;

test("qr-code/validate: a small PNG that decodes to a huge image is turned away promptly", {
  timeout: 300_000,
}, async (t: TestContext) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  // The first image loads the decoder (its module, WebAssembly and thread: seconds on a busy
  // machine): that is not the refusal being timed.
  const warmUp = await app.inject({
    method: "POST",
    url: `${API}/qr-code/validate`,
    headers: { ...who.headers, "content-type": "application/json" },
    payload: JSON.stringify({ code: `data:image/png;base64,${whitePng(64, 64).toString("base64")}` }),
  });
  assert.equal(warmUp.statusCode, 400, warmUp.body);
  // When this fails it fails slowly (the decoding blocks the process), so it stops at the first failure.
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        width: fc.integer({ min: 6000, max: 16_000 }),
        height: fc.integer({ min: 6000, max: 16_000 }),
      }),
      async ({ width, height }) => {
        const code = `data:image/png;base64,${whitePng(width, height).toString("base64")}`;
        const req: FuzzRequest = {
          method: "POST",
          url: `${API}/qr-code/validate`,
          headers: { ...who.headers, "content-type": "application/json" },
          payload: JSON.stringify({ code }),
          shape: "action",
          auth: "valid",
          note: `a ${code.length}-character data URL of a white ${width} × ${height} PNG`,
        };
        const started = performance.now();
        const res = await app.inject({
          method: req.method,
          url: req.url,
          headers: req.headers,
          payload: req.payload,
        });
        verify(req, res, performance.now() - started, who.api_secret, IMAGE_MS);
        assert.ok(res.statusCode >= 400, "no QR code in a white image");
        // Turned away by the size its header states, not after decoding it.
        assert.match(String(res.json().error?.details), /too large for a QR code/, res.body);
      },
    ),
    {
      numRuns: 4,
      endOnFailure: true,
      includeErrorInReport: true,
      ...(SEED === undefined ? {} : { seed: SEED }),
    },
  );
});

/** A forced, full collection: `gc` when node runs with --expose-gc, else the flag set at run time. */
function collector(): () => void {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === "function") return exposed as () => void;
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

function heapAfterCollection(gc: () => void): { heapUsed: number; arrayBuffers: number } {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heapUsed, arrayBuffers };
}
