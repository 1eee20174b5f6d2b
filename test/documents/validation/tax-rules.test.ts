import assert from "node:assert/strict";
import { test } from "node:test";
import { supplierTin } from "../../../src/documents/validation/rules/supplier.ts";
import { taxBase } from "../../../src/documents/validation/rules/tax-base.ts";
import type { RuleContext } from "../../../src/documents/validation/rules/types.ts";
import { build, fixture, freshInvoice, type Json, tenant } from "../../helpers.ts";

const WHO = { business_id: "5b7d3d2e-8f7a-4c1e-9b1a-2f8e6c4d1a00", service_id: "AB12CD34" };
const CTX: RuleContext = {
  business: { id: WHO.business_id, service_id: WHO.service_id, tin: "20198222-0002" },
};
const full = () => fixture("invoice-full", WHO) as Json & { tax_total: Json[]; legal_monetary_total: Json };
/** The first tax subtotal of a document, to change in place. */
const firstSubtotal = (doc: ReturnType<typeof full>) =>
  ((doc.tax_total[0] as Json).tax_subtotal as Json[])[0] as Json;

test("tax_base: subtotals' taxable amounts that cover the invoice say nothing", () => {
  assert.deepEqual(taxBase.check(full(), CTX), []);
  // Taxed, zero-rated and exempt lines together still cover the whole base.
  const mixed = full();
  mixed.tax_total = [
    {
      tax_amount: 37_500,
      tax_subtotal: [
        { taxable_amount: 500_000, tax_amount: 37_500, tax_category: { id: "STANDARD_VAT", percent: 7.5 } },
        { taxable_amount: 100_000, tax_amount: 0, tax_category: { id: "ZERO_VAT", percent: 0 } },
        { taxable_amount: 45_000, tax_amount: 0, tax_category: { id: "EXEMPTED", percent: 0 } },
      ],
    },
  ];
  assert.deepEqual(taxBase.check(mixed, CTX), []);
  // Float noise in the base is no mismatch.
  const noisy = full();
  firstSubtotal(noisy).taxable_amount = 645_000.0000000001;
  assert.deepEqual(taxBase.check(noisy, CTX), []);
});

test("tax_base_mismatch names both figures and what is left without a tax treatment", () => {
  const doc = full();
  Object.assign(firstSubtotal(doc), { taxable_amount: 0, tax_amount: 0 });
  const [finding, ...rest] = taxBase.check(doc, CTX);
  assert.deepEqual(rest, []);
  assert.equal(finding?.rule, "tax_base_mismatch");
  assert.equal(finding?.path, "tax_total[0].tax_subtotal");
  assert.equal(finding?.expected, 645_000);
  assert.equal(finding?.actual, 0);
  assert.match(
    String(finding?.message),
    /add up to 0, not legal_monetary_total.tax_exclusive_amount 645000: 645000/,
  );
});

test("tax_total_missing: a positive tax-exclusive amount with no tax total at all", () => {
  const doc = full();
  delete (doc as Json).tax_total;
  const [finding] = taxBase.check(doc, CTX);
  assert.equal(finding?.rule, "tax_total_missing");
  assert.equal(finding?.path, "tax_total");
  assert.match(String(finding?.message), /7\.5%/);
  const free = { ...doc, legal_monetary_total: { ...doc.legal_monetary_total, tax_exclusive_amount: 0 } };
  assert.deepEqual(taxBase.check(free, CTX), [], "nothing to tax");
});

test("supplier_tin: the signing business's TIN, written with spaces or in another case, is the same", () => {
  assert.deepEqual(supplierTin.check(full(), CTX), []);
  const spaced = full();
  spaced.accounting_supplier_party = {
    ...(spaced.accounting_supplier_party as Json),
    tin: " 20198222-0002 ",
  };
  assert.deepEqual(supplierTin.check(spaced, CTX), []);
  const other = full();
  other.accounting_supplier_party = { ...(other.accounting_supplier_party as Json), tin: "99999999-0001" };
  const [finding] = supplierTin.check(other, CTX);
  assert.equal(finding?.rule, "supplier_tin_mismatch");
  assert.equal(finding?.expected, "20198222-0002");
  assert.equal(finding?.actual, "99999999-0001");
  assert.deepEqual(supplierTin.check(other, { business: undefined }), [], "no business, nothing to compare");
});

for (const strict of [false, true]) {
  test(`a supplier TIN that is not the business's: ${strict ? "refused with EINVOICE_STRICT_SUPPLIER=on" : "a warning by default"}`, async (t) => {
    const { app, ctx } = await build(t, strict ? { EINVOICE_STRICT_SUPPLIER: "on" } : {});
    const a = await tenant(ctx, { tin: "11111111-0001" });
    const doc = freshInvoice(a);
    const res = await app.inject({
      method: "POST",
      url: "/api/v1/einvoice/sign",
      headers: a.headers,
      payload: doc,
    });
    const body = res.json() as Json;
    if (strict) {
      assert.equal(res.statusCode, 400, res.body);
      const violations = (body.error as { violations: Json[] }).violations;
      assert.deepEqual(
        violations.map((v) => [v.path, v.rule]),
        [["accounting_supplier_party.tin", "supplier_tin_mismatch"]],
      );
    } else {
      assert.equal(res.statusCode, 200, res.body);
      const warnings = body.warnings as Json[];
      assert.ok(warnings.some((w) => w.rule === "supplier_tin_mismatch" && w.expected === "11111111-0001"));
    }
  });
}

test("an answer lists 200 violations and counts them all", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const doc = { ...freshInvoice(a), invoice_line: Array.from({ length: 500 }, () => ({ hsn_code: 1 })) };
  const res = await app.inject({
    method: "POST",
    url: "/api/v1/einvoice/validate",
    headers: a.headers,
    payload: doc,
  });
  assert.equal(res.statusCode, 400);
  const error = res.json().error as Json & { violations: Json[] };
  assert.equal(error.violations.length, 200);
  assert.equal(error.violations_truncated, true);
  assert.ok(typeof error.violations_total === "number" && error.violations_total >= 3000);
  assert.match(String(error.details), new RegExp(`and ${(error.violations_total as number) - 3} more`));
});
