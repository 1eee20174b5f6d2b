import fs from "node:fs";
import path from "node:path";
/**
 * Requests made to cost the server more than their size: each is what an attacker would send to
 * stall the event loop or exhaust memory with one request. Each attack says what a correct server
 * answers; the hostile test sends them to a real server.
 */
import { freshInvoice, type Json, REPO_ROOT, type Tenant } from "../helpers.ts";
import { dataUrl, EOI, ihdr, jpegFrame, PNG_SIGNATURE, pngChunk, SCAN, SOI } from "../qr/png.ts";

export type Attack = {
  name: string;
  method?: "GET" | "POST";
  path: string;
  /** The body as sent: JSON text, so that malformed and huge texts go out as they are. */
  body: () => string;
  /** The statuses a correct server may answer. */
  statuses: readonly number[];
  /** Further checks of the answer. */
  check?: (body: Json) => string | undefined;
  headers?: Record<string, string>;
};

const API = "/api/v1/einvoice";

/** A document with `count` lines that all add up (quantity 1 at 100 each, VAT 7.5%). */
export function balancedInvoice(who: Tenant, count: number): Json {
  const doc = freshInvoice(who, "invoice-minimal");
  const template = (doc.invoice_line as Json[])[0] as Json;
  const line = {
    ...template,
    invoiced_quantity: 1,
    line_extension_amount: 100,
    price: { price_amount: 100 },
  };
  const total = 100 * count;
  const tax = total * 0.075;
  doc.invoice_line = Array.from({ length: count }, () => line);
  doc.legal_monetary_total = {
    line_extension_amount: total,
    tax_exclusive_amount: total,
    tax_inclusive_amount: total + tax,
    payable_amount: total + tax,
  };
  doc.tax_total = [
    {
      tax_amount: tax,
      tax_subtotal: [
        { taxable_amount: total, tax_amount: tax, tax_category: { id: "STANDARD_VAT", percent: 7.5 } },
      ],
    },
  ];
  return doc;
}

const violationsCapped = (body: Json): string | undefined => {
  const error = body.error as Json;
  const violations = error.violations as unknown[];
  if (!Array.isArray(violations) || violations.length > 200) return "violations must be listed, at most 200";
  if (error.violations_truncated !== true) return "violations_truncated must be true";
  if (typeof error.violations_total !== "number" || error.violations_total <= 200)
    return "violations_total must count them all";
  return undefined;
};

const warningsCapped = (body: Json): string | undefined => {
  const warnings = body.warnings as unknown[];
  if (!Array.isArray(warnings) || warnings.length !== 200) return "the first 200 warnings must be listed";
  if (body.warnings_truncated !== true || typeof body.warnings_total !== "number")
    return "warnings_truncated and warnings_total must say more were found";
  return undefined;
};

const detailsMatch = (pattern: RegExp) => (body: Json) => {
  const details = String((body.error as Json | undefined)?.details ?? "");
  return pattern.test(details)
    ? undefined
    : `error.details '${details.slice(0, 200)}' should match ${pattern}`;
};

/** Every field with a pattern, given text that makes a backtracking pattern take quadratic time. */
function patternedFields(who: Tenant): Attack[] {
  const n = 100_000;
  const cases: [string, Record<string, unknown>][] = [
    ["email, a@ then dots then @", { "accounting_supplier_party.email": `a@${".".repeat(n)}@` }],
    ["email without a dot", { "accounting_customer_party.email": `${"a".repeat(n)}@${"a".repeat(n)}` }],
    ["TIN of digits", { "accounting_supplier_party.tin": `${"1".repeat(n)}x` }],
    ["telephone of digits", { "accounting_customer_party.telephone": `+${"1".repeat(n)}x` }],
    ["date of digits", { issue_date: `2026-01-0${"1".repeat(n)}` }],
    ["time of digits", { issue_time: `12:00:0${"1".repeat(n)}` }],
    ["UUID of hex", { business_id: `${"a".repeat(n)}` }],
    ["IRN of hyphenated runs", { irn: `A1-${"A1".repeat(n / 2)}-` }],
    ["country of letters", { "accounting_supplier_party.postal_address.country": "N".repeat(n) }],
  ];
  return cases.map(([name, changes]) => ({
    name: `pattern: ${name}`,
    path: `${API}/validate`,
    statuses: [400],
    body: () => {
      const doc = freshInvoice(who) as Record<string, unknown>;
      for (const [at, value] of Object.entries(changes)) {
        const keys = at.split(".");
        let node = doc;
        for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
        node[keys.at(-1) as string] = value;
      }
      return JSON.stringify(doc);
    },
  }));
}

function png(...chunks: Buffer[]): string {
  return JSON.stringify({ code: dataUrl("image/png", Buffer.concat([PNG_SIGNATURE, ...chunks])) });
}

/** Every attack, for the business `who` whose certificate (for qr-code/create) is `certificate`. */
export function attacks(who: Tenant, certificate: string): Attack[] {
  const minimal = () => freshInvoice(who, "invoice-minimal");
  return [
    ...patternedFields(who),
    {
      name: "330,000 empty invoice lines in a MiB (too many objects to parse)",
      path: `${API}/validate`,
      statuses: [400],
      body: () => JSON.stringify({ ...minimal(), invoice_line: Array.from({ length: 330_000 }, () => ({})) }),
      check: detailsMatch(/objects and arrays/),
    },
    {
      name: "10,001 empty lines (one past the limit)",
      path: `${API}/validate`,
      statuses: [400],
      body: () => JSON.stringify({ ...minimal(), invoice_line: Array.from({ length: 10_001 }, () => ({})) }),
      check: (body) =>
        ((body.error as Json).violations as Json[]).some((v) => v.rule === "maxItems")
          ? undefined
          : "the line count must be named",
    },
    {
      name: "10,000 lines that each break the schema: violations capped",
      path: `${API}/validate`,
      statuses: [400],
      body: () =>
        JSON.stringify({ ...minimal(), invoice_line: Array.from({ length: 10_000 }, () => ({ x: 1 })) }),
      check: violationsCapped,
    },
    {
      name: "a batch of 200 documents of 5,000 empty lines (30 MB)",
      path: `${API}/batch/sign`,
      statuses: [400],
      body: () => {
        const doc = JSON.stringify({ ...minimal(), invoice_line: "LINES" }).replace(
          '"LINES"',
          `[${"{}, ".repeat(4999)}{}]`,
        );
        return `{"invoices":[${Array.from({ length: 200 }, () => doc).join(",")}]}`;
      },
    },
    {
      name: "a batch of 5 documents of 10,001 lines: over the batch's line budget",
      path: `${API}/batch/sign`,
      statuses: [400],
      body: () => JSON.stringify({ invoices: Array.from({ length: 5 }, () => balancedInvoice(who, 10_001)) }),
      check: detailsMatch(/invoice lines in all/),
    },
    {
      name: "a batch of 1,001 documents (one past the limit)",
      path: `${API}/batch/sign`,
      statuses: [400],
      body: () => JSON.stringify({ invoices: Array.from({ length: 1001 }, () => minimal()) }),
    },
    {
      name: "a batch of 1,000 valid documents (at the limit)",
      path: `${API}/batch/sign`,
      statuses: [200],
      body: () => JSON.stringify({ invoices: Array.from({ length: 1000 }, () => minimal()) }),
      check: (body) =>
        (body.data as Json[]).every((r) => r.status === "signed") ? undefined : "every document signs",
    },
    {
      name: "a batch of 1,000 invalid documents with 50 bad lines each",
      path: `${API}/batch/sign`,
      statuses: [200],
      body: () =>
        JSON.stringify({
          invoices: Array.from({ length: 1000 }, () => ({
            ...minimal(),
            invoice_line: Array.from({ length: 50 }, () => ({ x: 1 })),
          })),
        }),
      check: (body) =>
        (body.data as Json[]).every((r) => r.status === "invalid" && r.violations_truncated === true)
          ? undefined
          : "each document is invalid with its violations capped",
    },
    {
      name: "2,000 unknown keys of 400 characters",
      path: `${API}/validate`,
      statuses: [400],
      body: () => {
        const doc = minimal();
        for (let i = 0; i < 2000; i++) doc[`${String(i).padStart(4, "0")}${"k".repeat(396)}`] = 1;
        return JSON.stringify(doc);
      },
      check: detailsMatch(/members; at most 1,000/),
    },
    {
      name: "980 unknown keys of 1,000 characters: did-you-mean bounded, warnings capped",
      path: `${API}/validate`,
      statuses: [200],
      body: () => {
        const doc = minimal();
        for (let i = 0; i < 980; i++) doc[`${String(i).padStart(4, "0")}${"k".repeat(996)}`] = 1;
        return JSON.stringify(doc);
      },
      check: warningsCapped,
    },
    {
      name: "980 unknown keys of 60 characters in each of 10 lines",
      path: `${API}/validate`,
      statuses: [200],
      body: () => {
        const doc = balancedInvoice(who, 10);
        const line = { ...((doc.invoice_line as Json[])[0] as Json) };
        for (let i = 0; i < 980; i++) line[`hsn_code${String(i).padStart(52, "x")}`] = 1;
        doc.invoice_line = Array.from({ length: 10 }, () => line);
        return JSON.stringify(doc);
      },
      check: warningsCapped,
    },
    {
      name: "90,000 short unknown keys (a wide object)",
      path: `${API}/validate`,
      statuses: [400],
      body: () => {
        const doc = minimal();
        for (let i = 0; i < 90_000; i++) doc[`k${i}`] = 0;
        return JSON.stringify(doc);
      },
      check: detailsMatch(/members/),
    },
    {
      name: "one key of 900,000 characters",
      path: `${API}/validate`,
      statuses: [200],
      body: () => JSON.stringify({ ...minimal(), ["k".repeat(900_000)]: 1 }),
    },
    {
      name: "nesting 100,000 deep",
      path: `${API}/validate`,
      statuses: [400],
      body: () => `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
      check: detailsMatch(/nests deeper/),
    },
    {
      name: "a MiB of zeros in an unknown field",
      path: `${API}/validate`,
      statuses: [200],
      body: () =>
        JSON.stringify({ ...minimal(), zeros: "ZEROS" }).replace('"ZEROS"', `[${"0,".repeat(500_000)}0]`),
    },
    {
      name: "a number of 301 digits with an exponent in an unknown field",
      path: `${API}/validate`,
      statuses: [400],
      body: () => JSON.stringify({ ...minimal(), huge: "HUGE" }).replace('"HUGE"', `1${"0".repeat(300)}e9`),
      check: detailsMatch(/too large to represent/),
    },
    {
      name: "a note of a MiB",
      path: `${API}/validate`,
      statuses: [400, 413],
      body: () => JSON.stringify({ ...minimal(), note: "n".repeat(1024 * 1024) }),
    },
    {
      name: "a PNG whose second IHDR says 20,000 × 20,000",
      path: `${API}/qr-code/validate`,
      statuses: [400],
      body: () =>
        png(
          ihdr(100, 100),
          ihdr(20_000, 20_000),
          pngChunk("IDAT", Buffer.alloc(64)),
          pngChunk("IEND", Buffer.alloc(0)),
        ),
    },
    {
      name: "a JPEG whose second frame header says 60,000 × 60,000",
      path: `${API}/qr-code/validate`,
      statuses: [400],
      body: () =>
        JSON.stringify({
          code: dataUrl(
            "image/jpeg",
            Buffer.concat([SOI, jpegFrame(0xc0, 100, 100), jpegFrame(0xc2, 60_000, 60_000), SCAN, EOI]),
          ),
        }),
    },
    {
      name: "qr-code/create with an RSA-8192 public key",
      path: `${API}/qr-code/create`,
      statuses: [400],
      body: () =>
        JSON.stringify({
          public_key: fs
            .readFileSync(path.join(REPO_ROOT, "test", "qr", "fixtures", "rsa-8192.public.pem"))
            .toString("base64"),
          certificate,
          irn: String(minimal().irn),
        }),
      check: detailsMatch(/at most 4096 bits/),
    },
    {
      name: "an IRN of 200 characters in the path",
      method: "GET",
      path: `${API}/lookup/${"A".repeat(200)}`,
      statuses: [400, 404],
      body: () => "",
    },
    {
      name: "a request id and an idempotency key of 8,000 characters",
      path: `${API}/sign`,
      statuses: [200, 400],
      headers: { "x-request-id": "r".repeat(8000), "idempotency-key": "k".repeat(8000) },
      body: () => JSON.stringify(minimal()),
    },
  ];
}
