import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { checkReceived } from "../../src/inbox/received-checks.ts";
import { SHARED_DIR } from "../helpers.ts";

type Json = Record<string, unknown>;

/** A supplier's invoice as another access point would hand it over: the shared full fixture, re-addressed. */
function supplied(overrides: Json = {}): Json {
  const text = fs
    .readFileSync(path.join(SHARED_DIR, "fixtures", "invoice-full.json"), "utf8")
    .replaceAll("{{BUSINESS_ID}}", "6f0e1c2d-0000-4000-8000-00000000abcd")
    .replaceAll("{{SERVICE_ID}}", "A1B2C3D4");
  return { ...(JSON.parse(text) as Json), ...overrides };
}

const BUYER_TIN = "31845560-0001";
const buyers = new Map([["31845560-0001", "buyer-business"]]);

test("a well-formed invoice to one of our businesses is filed for it, with nothing to report", async () => {
  const checked = await checkReceived({ document: supplied() }, buyers);
  assert.equal(checked.accepted, true);
  if (!checked.accepted) return;
  assert.equal(checked.businessId, "buyer-business");
  assert.equal(checked.customerTin, BUYER_TIN);
  assert.equal(checked.supplierTin, "20198222-0002");
  assert.equal(checked.payableAmount, "693375");
  assert.equal(checked.currency, "NGN");
  assert.deepEqual(
    checked.warnings.filter(
      (w) => w.path.startsWith("legal_monetary_total") || w.path.startsWith("tax_total"),
    ),
    [],
    JSON.stringify(checked.warnings),
  );
});

test("a wrong total is kept as a warning named by its rule, never a reason to drop the invoice", async () => {
  const doc = supplied();
  doc.legal_monetary_total = { ...(doc.legal_monetary_total as Json), payable_amount: 693475 };
  const checked = await checkReceived({ document: doc }, buyers);
  assert.equal(checked.accepted, true);
  if (!checked.accepted) return;
  const total = checked.warnings.find((w) => w.path === "legal_monetary_total.payable_amount");
  assert.equal(total?.rule, "total_payable", JSON.stringify(checked.warnings));
  assert.match(total?.message ?? "", /must equal tax_inclusive_amount = 693375, but is 693475/);
  assert.equal(checked.payableAmount, "693475");
});

test("the buyer is found by TIN written with spaces or in lower case, and through the listing when the party is an id", async () => {
  const spaced = supplied({
    accounting_customer_party: { ...(supplied().accounting_customer_party as Json), tin: " 31845560-0001 " },
  });
  assert.equal((await checkReceived({ document: spaced }, buyers)).accepted, true);
  const byId = supplied({ accounting_customer_party: { id: "0f6c3c1e-party" } });
  const listed = await checkReceived({ document: byId, customerTin: BUYER_TIN }, buyers);
  assert.equal(listed.accepted, true);
  assert.equal((await checkReceived({ document: byId }, buyers)).accepted, false);
});

test("an IRN off the template is reported, not refused; no IRN, or a buyer not ours, cannot be filed", async () => {
  const odd = await checkReceived({ document: supplied({ irn: "inv-1-x-2024" }) }, buyers);
  assert.equal(odd.accepted, true);
  if (odd.accepted) assert.ok(odd.warnings.some((w) => w.rule === "irn_template" && w.path === "irn"));

  const none = await checkReceived({ document: supplied({ irn: undefined }) }, buyers);
  assert.deepEqual(none, { accepted: false, irn: null, reason: "the invoice has no IRN" });
  const listedIrn = await checkReceived(
    { document: supplied({ irn: undefined }), irn: "INV9-A1B2C3D4-20240611" },
    buyers,
  );
  assert.equal(listedIrn.accepted, true);

  const elsewhere = await checkReceived({ document: supplied() }, new Map([["99999999-0001", "x"]]));
  assert.equal(elsewhere.accepted, false);
  if (!elsewhere.accepted) assert.match(elsewhere.reason, /31845560-0001 is not the TIN of a business/);
});

test("hostile documents cost little and report a bounded number of findings", async () => {
  const lines = Array.from({ length: 5000 }, () => ({ invoiced_quantity: "x", price: "y" }));
  const started = performance.now();
  const checked = await checkReceived({ document: supplied({ invoice_line: lines }) }, buyers);
  assert.ok(performance.now() - started < 2000);
  assert.equal(checked.accepted, true);
  if (checked.accepted) assert.ok(checked.warnings.length <= 51, String(checked.warnings.length));

  const junk = await checkReceived({ document: { irn: 42, accounting_customer_party: "x" } as Json }, buyers);
  assert.equal(junk.accepted, false);
  const longIrn = await checkReceived({ document: supplied({ irn: "A".repeat(5000) }) }, buyers);
  assert.equal(longIrn.accepted, false);
  if (!longIrn.accepted) assert.equal(longIrn.irn?.length, 100);
});

test("what MBS documents and this API does not (a service line's ISIC class) is not the supplier's mistake", async () => {
  const doc = supplied();
  const lines = doc.invoice_line as Json[];
  const service: Json = { ...(lines[0] as Json), isic_code: "4690", service_category: "Wholesale" };
  delete service.hsn_code;
  const noCode: Json = { ...(lines[0] as Json) };
  delete noCode.hsn_code;
  doc.invoice_line = [service, noCode];
  const checked = await checkReceived({ document: doc }, buyers);
  assert.equal(checked.accepted, true);
  if (!checked.accepted) return;
  assert.deepEqual(
    checked.warnings.filter((w) => w.path.startsWith("invoice_line[0]")),
    [],
    JSON.stringify(checked.warnings),
  );
  // A goods line without its HS code is still reported.
  assert.ok(
    checked.warnings.some((w) => w.path === "invoice_line[1].hsn_code" && w.rule === "required"),
    JSON.stringify(checked.warnings),
  );
});
