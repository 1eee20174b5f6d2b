import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { bidiMarker, hasBidiControl, showBidiControls } from "../../src/bidi.ts";
import { bidiControls } from "../../src/documents/validation/rules/bidi.ts";
import type { RuleContext } from "../../src/documents/validation/rules/types.ts";
import { validateInvoice } from "../../src/documents/validation/validation.ts";
import { MAX_VIOLATIONS, type Violation } from "../../src/errors.ts";
import { escapeHtml } from "../../src/html/html.ts";
import { build, fixture, type Json, tempDir, tenant } from "../helpers.ts";

/*
 * Bidirectional controls (U+202E and its kin) in an invoice's texts: a warning at validate, the
 * document signed and stored as sent, and every place that shows it to a person (the dashboard, the
 * verification page, the PDF) shows each control as a visible marker, never the control itself.
 */

const run = promisify(execFile);
const API = "/api/v1/einvoice";
const RLO = "\u202E";
const withoutPoppler =
  !fs.existsSync("/usr/bin/pdftotext") &&
  "no pdftotext in /usr/bin (apt-get install -y poppler-utils): PDF part skipped";

/** Every control the rule and the renderers know. */
const CONTROLS = [
  "\u202A",
  "\u202B",
  "\u202C",
  "\u202D",
  "\u202E",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200E",
  "\u200F",
  "\u061C",
];
const RAW = new RegExp(`[${CONTROLS.join("")}]`);

const WHO = { business_id: "5b7d3d2e-8f7a-4c1e-9b1a-2f8e6c4d1a00", service_id: "AB12CD34" };
const CTX: RuleContext = { business: { id: WHO.business_id, service_id: WHO.service_id } };
const pairs = (found: Violation[]) => found.filter((v) => v.rule === "bidi_control").map((v) => v.path);

/** The full fixture with controls in a party's name, an item's name and description, the note and an address. */
function withControls(doc: Json): Json {
  const customer = doc.accounting_customer_party as Json;
  customer.party_name = `Lekki Homes ${RLO}oC tnempoleveD`;
  (customer.postal_address as Json).street_name = `3 Faulks \u2067Road\u2069`;
  const item = ((doc.invoice_line as Json[])[0] as Json).item as Json;
  item.name = `Portland cement ${RLO}gk 05`;
  item.description = `Grade\u200F 42.5R`;
  doc.note = `Delivery to ${RLO}eciffo etis`;
  return doc;
}

test("the shared function shows each control as a visible marker, and only those", () => {
  for (const control of CONTROLS) {
    assert.ok(hasBidiControl(`a${control}b`), control);
    const code = control.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0");
    assert.equal(showBidiControls(`a${control}b`), `a⟨U+${code}⟩b`);
    assert.equal(bidiMarker(control), `⟨U+${code}⟩`);
  }
  // Neighbours that are not bidirectional controls are left alone (zero-width joiners, Arabic letters).
  for (const other of ["\u200B", "\u200C", "\u200D", "\u2060", "\u2028", "\u0627", "Ọ", "₦", "😀"])
    assert.equal(showBidiControls(`a${other}b`), `a${other}b`);
  assert.equal(escapeHtml(`<b>${RLO}&</b>`), "&lt;b&gt;⟨U+202E⟩&amp;&lt;/b&gt;");
  // Linear: a MiB of controls is shown in one pass.
  const started = performance.now();
  const shown = showBidiControls(RLO.repeat(1 << 20));
  assert.equal(shown.length, (1 << 20) * "⟨U+202E⟩".length);
  assert.ok(performance.now() - started < 2000);
});

test("the bidi_control rule: one warning per text holding controls, field names too, with its path; linear", () => {
  const doc = withControls(fixture("invoice-full", WHO));
  doc[`x_${RLO}custom`] = { nested: [[`deep ${RLO}`], 1, null, true] };
  const { errors, warnings } = validateInvoice(doc, CTX);
  assert.deepEqual(errors, []);
  assert.deepEqual(pairs(warnings), [
    "note",
    "accounting_customer_party.party_name",
    "accounting_customer_party.postal_address.street_name",
    "invoice_line[0].item.name",
    "invoice_line[0].item.description",
    "x_⟨U+202E⟩custom",
    "x_⟨U+202E⟩custom.nested[0][0]",
  ]);
  const street = warnings.find((v) => v.path.endsWith("street_name"));
  assert.match(String(street?.message), /\(⟨U\+2067⟩, ⟨U\+2069⟩\)/);
  const key = warnings.find((v) => v.path === "x_⟨U+202E⟩custom");
  assert.match(String(key?.message), /^is a field whose name holds a bidirectional control character/);
  // The findings carry no raw control (an answer may be shown to people as well).
  assert.doesNotMatch(JSON.stringify(warnings.filter((v) => v.rule === "bidi_control")), RAW);

  // A document without any has none.
  assert.deepEqual(pairs(validateInvoice(fixture("invoice-full", WHO), CTX).warnings), []);

  // Past what an answer lists, texts are counted into one last finding, not each made one.
  const many = bidiControls.check({ x: Array.from({ length: 50_000 }, () => RLO) }, CTX);
  assert.equal(many.length, MAX_VIOLATIONS + 1);
  assert.equal(many.at(-1)?.path, `x[${MAX_VIOLATIONS}]`);
  assert.match(String(many.at(-1)?.message), /as do 49799 more texts after it/);

  // Deep nesting does not overflow (the walk is iterative), and a wide document costs one pass.
  let deep: unknown = `x${RLO}`;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(bidiControls.check({ deep }, CTX).length, 1);
  const wide = { lines: Array.from({ length: 200_000 }, (_, i) => ({ name: `item ${i}`, n: i })) };
  const started = performance.now();
  assert.deepEqual(bidiControls.check(wide, CTX), []);
  assert.ok(performance.now() - started < 2000, "200,000 objects in under 2 s");
});

test("through the API: validate warns, sign stores the document as sent, and the dashboard, /verify and the PDF show markers", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx, { tin: "20198222-0002" });
  const doc = withControls(fixture("invoice-full", who));

  const validated = await app.inject({
    method: "POST",
    url: `${API}/validate`,
    headers: who.headers,
    payload: doc,
  });
  assert.equal(validated.statusCode, 200, validated.body);
  const warnings = validated.json().warnings as Violation[];
  assert.deepEqual(pairs(warnings), [
    "note",
    "accounting_customer_party.party_name",
    "accounting_customer_party.postal_address.street_name",
    "invoice_line[0].item.name",
    "invoice_line[0].item.description",
  ]);

  const signed = await app.inject({ method: "POST", url: `${API}/sign`, headers: who.headers, payload: doc });
  assert.equal(signed.statusCode, 200, signed.body);
  assert.ok(pairs(signed.json().warnings as Violation[]).includes("accounting_customer_party.party_name"));
  const irn = String(doc.irn);
  const record = (await app.inject({ url: `${API}/${irn}`, headers: who.headers })).json().data as Json & {
    document: Json;
    verification_qr: string;
  };
  // Signed and stored as sent: the controls are in the stored document, unchanged.
  const stored = record.document;
  assert.equal((stored.accounting_customer_party as Json).party_name, `Lekki Homes ${RLO}oC tnempoleveD`);
  assert.equal(stored.note, `Delivery to ${RLO}eciffo etis`);
  assert.equal((((stored.invoice_line as Json[])[0] as Json).item as Json).description, "Grade\u200F 42.5R");

  // The dashboard's invoice page (its facts and the document) shows markers, never a control.
  const password = ctx.operator.password;
  assert.ok(password);
  const login = await app.inject({
    method: "POST",
    url: "/dashboard/login",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams({ password }).toString(),
  });
  assert.equal(login.statusCode, 303, login.body);
  const session = login.cookies.find((c) => c.name === "einvoice_operator");
  assert.ok(session);
  const page = await app.inject({
    url: `/dashboard/invoices/${irn}`,
    headers: { cookie: `einvoice_operator=${session.value}` },
  });
  assert.equal(page.statusCode, 200, page.body);
  assert.doesNotMatch(page.body, RAW);
  assert.ok(page.body.includes("Lekki Homes ⟨U+202E⟩oC tnempoleveD"), "the customer's name, marked");
  assert.ok(page.body.includes("3 Faulks ⟨U+2067⟩Road⟨U+2069⟩"));
  assert.ok(page.body.includes("Grade⟨U+200F⟩ 42.5R"));

  // The verification page: the valid token's page, and text pasted with a control, shown marked.
  const verified = await app.inject({ url: `/verify?t=${encodeURIComponent(record.verification_qr)}` });
  assert.equal(verified.statusCode, 200);
  assert.match(verified.body, /Genuine/);
  assert.doesNotMatch(verified.body, RAW);
  const pasted = await app.inject({ url: `/verify?t=${encodeURIComponent(`eyJ${RLO}fake.token`)}` });
  assert.equal(pasted.statusCode, 200);
  assert.match(pasted.body, /Not verified/);
  assert.doesNotMatch(pasted.body, RAW);
  assert.ok(pasted.body.includes("eyJ⟨U+202E⟩fake.token"), "the pasted text, marked");

  // The PDF: its drawn text reads as stored, each control a marker.
  if (withoutPoppler) {
    t.diagnostic(withoutPoppler);
    return;
  }
  const pdf = await app.inject({ url: `${API}/${irn}.pdf`, headers: who.headers });
  assert.equal(pdf.statusCode, 200);
  const file = path.join(tempDir(t), "invoice.pdf");
  fs.writeFileSync(file, pdf.rawPayload);
  const { stdout } = await run("pdftotext", ["-raw", "-enc", "UTF-8", file, "-"], { maxBuffer: 16 << 20 });
  const text = stdout.replace(/\s+/g, " ");
  assert.doesNotMatch(text, RAW);
  for (const shown of [
    "Lekki Homes ⟨U+202E⟩oC tnempoleveD",
    "Portland cement ⟨U+202E⟩gk 05",
    "Grade⟨U+200F⟩ 42.5R",
    "3 Faulks ⟨U+2067⟩Road⟨U+2069⟩",
    "Delivery to ⟨U+202E⟩eciffo etis",
  ]) {
    assert.ok(text.includes(shown), `${shown} in: ${text}`);
  }
});
