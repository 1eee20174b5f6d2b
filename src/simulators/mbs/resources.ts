import { COUNTRIES } from "./countries.ts";
import { CURRENCIES } from "./currencies.ts";
import type { ServiceCode } from "./services-codes.ts";
import { VAT_EXEMPTIONS_EXTRACT } from "./vat-exemptions.ts";

// The reference lists (`GET /api/v1/invoice/resources/{list}`), each answered `{code: 200, data: [...]}`
// [recorded]. Complete: countries (249), currencies (119), invoice-types (20), and services-codes
// when loaded from a file (419). Extracts: vat-exemptions, services-codes by default, and the lists
// no capture shows ([unknown] fields): tax-categories, payment-means, states, lgas, hs-codes,
// invoice-quantity-codes.

type Row = Record<string, string>;

const pairs = (rows: readonly (readonly [string, string])[], a = "code", b = "value"): Row[] =>
  rows.map(([x, y]) => ({ [a]: x, [b]: y }));

/** [recorded] 20 string codes; MBS's 380/381 are the reverse of the UN/CEFACT list. */
export const INVOICE_TYPE_CODES = [
  "380",
  "381",
  "384",
  "385",
  "386",
  "388",
  "389",
  "390",
  "392",
  "393",
  "394",
  "395",
  "396",
  "397",
  "399",
  "400",
  "402",
  "404",
  "406",
  "408",
] as const;

const INVOICE_TYPE_NAMES = [
  "Credit Note",
  "Commercial Invoice",
  "Debit Note",
  "Self Billed Invoice",
  "Factored Invoice",
  "Statement of Account",
  "Purchase Order",
  "Proforma Invoice",
  "Consignment Invoice",
  "Self-billed Credit Note",
  "Self-billed Invoice",
  "Credit Note Request",
  "Invoice Request",
  "Final Settlement",
  "Bill of Lading",
  "Waybill",
  "Shipping Instructions",
  "Certificate of Origin",
  "Customs Declaration",
  "Packing List",
];

const STATES: readonly (readonly [string, string])[] = [
  ["NG-AB", "Abia"],
  ["NG-FC", "Federal Capital Territory"],
  ["NG-KN", "Kano"],
  ["NG-LA", "Lagos"],
  ["NG-OY", "Oyo"],
  ["NG-RI", "Rivers"],
];

// The Abia codes are the known real ones; the others follow the same rule (first letters of the name).
const LGAS: readonly (readonly [string, string, string])[] = [
  ["NG-AB-ANO", "Aba North", "NG-AB"],
  ["NG-AB-ASO", "Aba South", "NG-AB"],
  ["NG-AB-ARO", "Arochukwu", "NG-AB"],
  ["NG-AB-BEN", "Bende", "NG-AB"],
  ["NG-FC-AMA", "Abuja Municipal Area Council", "NG-FC"],
  ["NG-KN-NAS", "Nassarawa", "NG-KN"],
  ["NG-LA-IKE", "Ikeja", "NG-LA"],
  ["NG-LA-EOS", "Eti-Osa", "NG-LA"],
  ["NG-OY-INO", "Ibadan North", "NG-OY"],
  ["NG-RI-PHA", "Port Harcourt", "NG-RI"],
];

/**
 * [doc] `LOCAL_SALES_TAX` is the collection's example; [client] integrators use `STANDARD_VAT`,
 * `ZERO_VAT`, `EXEMPT_VAT`, `REDUCED_VAT`; February 2026 added withholding tax, exempted and stamp
 * duty. Every one of them is accepted: the authority's own example is not refused [unknown].
 */
const TAX_CATEGORIES = [
  { code: "STANDARD_VAT", value: "Standard Value-Added Tax", percent: "7.5" },
  { code: "REDUCED_VAT", value: "Reduced Value-Added Tax", percent: "7.5" },
  { code: "ZERO_VAT", value: "Zero-rated Value-Added Tax", percent: "0.0" },
  { code: "EXEMPT_VAT", value: "Exempt Value-Added Tax", percent: "0.0" },
  { code: "LOCAL_SALES_TAX", value: "Local Sales Tax", percent: "Not Available" },
  { code: "STAMP_DUTY", value: "Stamp Duty", percent: "Not Available" },
  { code: "WITHHOLDING_TAX", value: "Withholding Tax", percent: "Not Available" },
  { code: "EXEMPTED", value: "Exempted", percent: "0.0" },
];

/** [client] A tax subtotal's `tax_category.id` must be one of these. */
export const TAX_CATEGORY_CODES: ReadonlySet<string> = new Set(TAX_CATEGORIES.map((c) => c.code));

/** The lists of one simulator: all fixed but services-codes, which may come from a file. */
export function createResources(
  serviceCodes: readonly ServiceCode[],
): Readonly<Record<string, readonly object[]>> {
  return {
    countries: COUNTRIES,
    currencies: CURRENCIES,
    "invoice-types": INVOICE_TYPE_CODES.map((code, i) => ({ code, value: INVOICE_TYPE_NAMES[i] ?? code })),
    "payment-means": pairs([
      ["10", "Cash"],
      ["20", "Cheque"],
      ["30", "Credit Transfer"],
      ["42", "ACH Credit"],
      ["48", "Bank Card"],
      ["49", "Direct Debit"],
      ["97", "Other"],
    ]),
    "tax-categories": TAX_CATEGORIES,
    "vat-exemptions": VAT_EXEMPTIONS_EXTRACT,
    "services-codes": serviceCodes,
    "hs-codes": pairs(
      [
        ["2523.29", "Portland cement, other than white"],
        ["7214.20", "Bars and rods of iron, with deformations"],
        ["1006.30", "Rice, semi-milled or wholly milled"],
        ["8471.30", "Portable automatic data-processing machines"],
      ],
      "hscode",
      "description",
    ),
    lgas: LGAS.map(([code, name, state_code]) => ({ code, name, state_code })),
    states: pairs(STATES, "code", "name"),
    "invoice-quantity-codes": pairs([
      ["C62", "One (unit)"],
      ["H87", "Piece"],
      ["EA", "Each"],
      ["KGM", "Kilogram"],
      ["LTR", "Litre"],
      ["MTR", "Metre"],
      ["BG", "Bag"],
      ["HUR", "Hour"],
    ]),
  };
}
