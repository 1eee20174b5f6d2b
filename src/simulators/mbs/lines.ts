import { amount, type Fields, maxLength, object, objects, text } from "./checks.ts";
import { invalid } from "./envelopes.ts";
import { TAX_CATEGORY_CODES } from "./resources.ts";
import type { Rules } from "./rules.ts";

// The lines and tax totals of a document (the MBS spec, section 3). Totals are not added up: whether
// the sandbox checks arithmetic is [unknown], and a connector must not rely on the simulator catching
// a wrong sum.

const DOC = "invoicerequest.invoice";

/** [client] disputed: `price_unit` at most 3 characters when the `price_unit_limit` rule is on. */
export const MAX_PRICE_UNIT = 3;

/** [client] The quoted refusal of a tax category not in the list: `taxtotal[i].taxsubtotal[j].taxcategory.id`. */
export function taxCategoryRefusal(i = 0, j = 0): string {
  return `${DOC}.taxtotal[${i}].taxsubtotal[${j}].taxcategory.id must be a valid tax category, refer to the invoice resource apis`;
}

/** [doc] `tax_total`: each with `tax_amount` and subtotals whose category is in the list [client]. */
export function checkTaxTotals(doc: Fields): void {
  objects(doc, "tax_total", `${DOC}.taxtotal`, { required: false }).forEach((total, i) => {
    const path = `${DOC}.taxtotal[${i}]`;
    amount(total, "tax_amount", `${path}.taxamount`, true);
    objects(total, "tax_subtotal", `${path}.taxsubtotal`, { required: false }).forEach((sub, j) => {
      const subPath = `${path}.taxsubtotal[${j}]`;
      amount(sub, "taxable_amount", `${subPath}.taxableamount`, true);
      amount(sub, "tax_amount", `${subPath}.taxamount`, true);
      const category = object(sub, "tax_category", `${subPath}.taxcategory`, true) ?? {};
      const id = text(category, "id", `${subPath}.taxcategory.id`, true);
      if (id !== undefined && !TAX_CATEGORY_CODES.has(id)) throw invalid(taxCategoryRefusal(i, j));
      amount(category, "percent", `${subPath}.taxcategory.percent`, false);
    });
  });
}

/** [doc] `legal_monetary_total` with its four amounts, JSON numbers [client]. */
export function checkTotals(doc: Fields): void {
  const path = `${DOC}.legalmonetarytotal`;
  const totals = object(doc, "legal_monetary_total", path, true) ?? {};
  for (const name of [
    "line_extension_amount",
    "tax_exclusive_amount",
    "tax_inclusive_amount",
    "payable_amount",
  ]) {
    amount(totals, name, `${path}.${name.replaceAll("_", "")}`, true);
  }
}

function checkItemAndPrice(line: Fields, path: string, rules: Rules): void {
  const item = object(line, "item", `${path}.item`, true) ?? {};
  text(item, "name", `${path}.item.name`, true);
  // [client] quoted refused when missing; one APP's schema calls it optional: the switch.
  text(item, "description", `${path}.item.description`, rules.item_description_required);
  text(item, "sellers_item_identification", `${path}.item.sellersitemidentification`, false);
  const price = object(line, "price", `${path}.price`, true) ?? {};
  amount(price, "price_amount", `${path}.price.priceamount`, true);
  amount(price, "base_quantity", `${path}.price.basequantity`, true);
  const unit = text(price, "price_unit", `${path}.price.priceunit`, true);
  if (rules.price_unit_limit) maxLength(unit, MAX_PRICE_UNIT, `${path}.price.priceunit`);
}

/** [doc] The lines, at least one; [client] a service line's `isic_code` needs its `service_category`. */
export function checkLines(doc: Fields, rules: Rules): void {
  const lines = objects(doc, "invoice_line", `${DOC}.invoiceline`, { required: true, nonEmpty: true });
  lines.forEach((line, i) => {
    const path = `${DOC}.invoiceline[${i}]`;
    text(line, "hsn_code", `${path}.hsncode`, false);
    text(line, "product_category", `${path}.productcategory`, false);
    for (const name of ["discount_rate", "discount_amount", "fee_rate", "fee_amount"]) {
      amount(line, name, `${path}.${name.replaceAll("_", "")}`, false);
    }
    amount(line, "invoiced_quantity", `${path}.invoicedquantity`, true);
    amount(line, "line_extension_amount", `${path}.lineextensionamount`, true);
    checkItemAndPrice(line, path, rules);
    // [client] this path keeps its underscore: MBS's paths are shown verbatim, never rebuilt.
    const isic = text(line, "isic_code", `${path}.isiccode`, false);
    const category = text(line, "service_category", `${path}.service_category`, false);
    if (isic !== undefined && category === undefined) {
      throw invalid(`${path}.service_category is required when isic_code is provided`);
    }
  });
}

/** [client] The payment statuses a document may carry; `CANCELED` [doc] behind its rule. */
export function documentStatuses(rules: Rules): string[] {
  return ["PENDING", "PAID", "PARTIAL", ...(rules.canceled ? ["CANCELED"] : [])];
}
