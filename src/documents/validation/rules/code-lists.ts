import type { Violation } from "../../../errors.ts";
import { COUNTRY_CODES } from "../../../reference/countries.ts";
import { CURRENCIES } from "../../../reference/currencies.ts";
import {
  INVOICE_KINDS,
  INVOICE_TYPES,
  PAYMENT_MEANS,
  PAYMENT_STATUSES,
  STATES,
  TAX_CATEGORIES,
} from "../../../reference/data.ts";
import { LGAS } from "../../../reference/lgas.ts";
import { asArray, isObject, type Rule } from "./types.ts";

const lists = {
  invoice_type: new Set(INVOICE_TYPES.map((t) => t.code)),
  currency: new Set(CURRENCIES.map((c) => c.code)),
  payment_means: new Set(PAYMENT_MEANS.map((p) => p.code)),
  tax_category: new Set(TAX_CATEGORIES.map((t) => t.code)),
  payment_status: new Set<string>(PAYMENT_STATUSES),
  invoice_kind: new Set<string>(INVOICE_KINDS),
  state: new Set(STATES.map((s) => s.code)),
  country: COUNTRY_CODES,
};
const lgaState = new Map(LGAS.map((l) => [l.code, l.state_code]));

const hints: Record<keyof typeof lists, string> = {
  invoice_type: "a code of resources/invoices-types (e.g. 381)",
  currency: "an ISO 4217 code of resources/currencies (e.g. NGN)",
  payment_means: "a code of resources/payment-means (e.g. 30)",
  tax_category: "a code of resources/tax-categories (e.g. STANDARD_VAT)",
  payment_status: `one of ${PAYMENT_STATUSES.join(", ")}`,
  invoice_kind: "one of B2B, B2C, B2G",
  state: "a state code of resources/states (e.g. NG-LA)",
  country: "an assigned ISO 3166-1 alpha-2 country code (e.g. NG)",
};

function inList(list: keyof typeof lists, value: unknown, path: string, out: Violation[]): void {
  if (typeof value === "string" && !lists[list].has(value)) {
    out.push({ path, rule: `code_list.${list}`, message: `'${value}' is not ${hints[list]}`, actual: value });
  }
}

function address(party: unknown, path: string, out: Violation[]): void {
  if (!isObject(party) || !isObject(party.postal_address)) return;
  const { state, lga, country } = party.postal_address;
  const at = `${path}.postal_address`;
  // Two upper-case letters that name no country: MBS refuses them ("must be a valid country code,
  // refer to the invoice resource apis"). Any other text is the format's finding, reported once.
  if (typeof country === "string" && /^[A-Z]{2}$/.test(country))
    inList("country", country, `${at}.country`, out);
  inList("state", state, `${at}.state`, out);
  if (typeof lga !== "string") return;
  const owner = lgaState.get(lga);
  if (owner === undefined) {
    out.push({
      path: `${at}.lga`,
      rule: "code_list.lga",
      message: `'${lga}' is not an LGA code of resources/lgas (e.g. NG-AB-ANO)`,
      actual: lga,
    });
  } else if (typeof state === "string" && lists.state.has(state) && owner !== state) {
    out.push({
      path: `${at}.lga`,
      rule: "lga_in_state",
      message: `LGA '${lga}' belongs to state ${owner}, not to ${state}`,
      expected: owner,
      actual: state,
      related: [`${at}.state`],
    });
  }
}

export const codeLists: Rule = {
  name: "code_lists",
  severity: "error",
  check(doc) {
    const out: Violation[] = [];
    inList("invoice_type", doc.invoice_type_code, "invoice_type_code", out);
    inList("invoice_kind", doc.invoice_kind, "invoice_kind", out);
    inList("payment_status", doc.payment_status, "payment_status", out);
    inList("currency", doc.document_currency_code, "document_currency_code", out);
    inList("currency", doc.tax_currency_code, "tax_currency_code", out);
    asArray(doc.payment_means).forEach((entry, i) => {
      if (isObject(entry))
        inList("payment_means", entry.payment_means_code, `payment_means[${i}].payment_means_code`, out);
    });
    asArray(doc.tax_total).forEach((total, i) => {
      if (!isObject(total)) return;
      asArray(total.tax_subtotal).forEach((sub, j) => {
        if (isObject(sub) && isObject(sub.tax_category)) {
          inList(
            "tax_category",
            sub.tax_category.id,
            `tax_total[${i}].tax_subtotal[${j}].tax_category.id`,
            out,
          );
        }
      });
    });
    // The categories a line or an allowance says it bears, as the breakdown's are.
    for (const [field, list] of [
      ["invoice_line", doc.invoice_line],
      ["allowance_charge", doc.allowance_charge],
    ] as const) {
      asArray(list).forEach((entry, i) => {
        if (isObject(entry) && isObject(entry.tax_category))
          inList("tax_category", entry.tax_category.id, `${field}[${i}].tax_category.id`, out);
      });
    }
    address(doc.accounting_supplier_party, "accounting_supplier_party", out);
    address(doc.accounting_customer_party, "accounting_customer_party", out);
    return out;
  },
};
