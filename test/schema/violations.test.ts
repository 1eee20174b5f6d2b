import assert from "node:assert/strict";
import { test } from "node:test";
import { summarize } from "../../src/errors.ts";
import { pointerToPath, schemaViolations } from "../../src/schema/violations.ts";

test("schema errors become violations with readable paths", () => {
  assert.equal(pointerToPath("/invoice_line/0/price/price_amount"), "invoice_line[0].price.price_amount");
  assert.equal(pointerToPath(""), "");
  const violations = schemaViolations([
    { instancePath: "/accounting_supplier_party", keyword: "required", params: { missingProperty: "tin" } },
    { instancePath: "/invoice_line/1/invoiced_quantity", keyword: "type", params: { type: "number" } },
    { instancePath: "/issue_date", keyword: "format", params: { format: "date" } },
  ]);
  assert.deepEqual(
    violations.map((v) => [v.path, v.rule, v.message]),
    [
      ["accounting_supplier_party.tin", "required", "is required"],
      ["invoice_line[1].invoiced_quantity", "type", "must be a number"],
      ["issue_date", "format", "must be a real calendar date written YYYY-MM-DD"],
    ],
  );
  assert.match(summarize([...violations, ...violations]), /and 3 more/);
});
