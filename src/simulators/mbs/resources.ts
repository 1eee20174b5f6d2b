import { COUNTRIES } from "./countries.ts";
import { builtInCurrencies } from "./currencies.ts";
import { LOADED_LISTS, type LoadedLists } from "./resource-files.ts";
import type { ServiceCode } from "./services-codes.ts";
import { VAT_EXEMPTIONS_EXTRACT } from "./vat-exemptions.ts";

// The reference lists (`GET /api/v1/invoice/resources/{list}`), each answered `{code: 200, data: [...]}`
// [recorded]. Given a folder of the authority's own lists (resource-files.ts), countries,
// currencies, invoice-types, vat-exemptions and services-codes are those, exactly. Otherwise they are
// built in: countries (249) and currencies (119) from packages, close to MBS's but not the same
// (currencies.ts, countries.ts say how), invoice-types (20, MBS's), services-codes from a file of
// ISIC classes (419) or an extract, vat-exemptions an extract. The lists no capture shows ([unknown]
// fields) are always built in: tax-categories, payment-means, states, lgas, hs-codes,
// invoice-quantity-codes.

type Row = Record<string, string>;

const pairs = (rows: readonly (readonly [string, string])[], a = "code", b = "value"): Row[] =>
  rows.map(([x, y]) => ({ [a]: x, [b]: y }));

/** [recorded] 20 string codes; MBS's 380/381 are the reverse of the UN/CEFACT list. */
const INVOICE_TYPE_CODES = [
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

/**
 * The codes a document's fields must be among, read from the lists the simulator serves: MBS refuses
 * a code "not in the list … refer to the invoice resource apis" [client], so a simulator given the
 * authority's lists checks against those (its currencies differ from the built-in ones: BYR, not BYN
 * or ZWL).
 */
export type ReferenceCodes = {
  /** [client] A postal address's `country`: the countries' `alpha_2`. */
  countries: ReadonlySet<string>;
  /** A document's and a VAT report's currency codes: the currencies' `code`. */
  currencies: ReadonlySet<string>;
  /** [recorded] `invoice_type_code`: the invoice types' `code`. */
  invoiceTypes: ReadonlySet<string>;
};

export type Resources = {
  /** The lists by name, as `resources/{list}` answers them. */
  lists: Readonly<Record<string, readonly object[]>>;
  codes: ReferenceCodes;
  /** Where the five recorded lists come from, in words, for the start-up output. */
  source: string;
};

const codesOf = (list: readonly object[] | undefined, field: string): ReadonlySet<string> =>
  new Set(
    (list ?? [])
      .map((entry) => (entry as Record<string, unknown>)[field])
      .filter((c) => typeof c === "string"),
  );

/** What the start-up output says of the lists: from a folder, or the built-in ones and how they differ. */
function sourceOf(lists: Resources["lists"], folder: string | undefined): string {
  const sizes = LOADED_LISTS.map((name) => `${name} ${lists[name]?.length ?? 0}`).join(", ");
  return folder === undefined
    ? `reference lists built in (${sizes}): not the authority's own; vat-exemptions is an extract, and services-codes unless --services-codes is given; --resources <dir> (resourcesDir) serves the authority's lists from a folder`
    : `reference lists from ${folder} (${sizes})`;
}

/**
 * The lists of one simulator. `loaded`: the authority's five lists read from a folder, served in
 * place of the built-in ones (`serviceCodes` is then not served).
 */
export function createResources(options: {
  serviceCodes: readonly ServiceCode[];
  loaded?: { folder: string; lists: LoadedLists } | undefined;
}): Resources {
  const lists = {
    ...builtInLists(options.serviceCodes, options.loaded?.lists.currencies === undefined),
    ...options.loaded?.lists,
  };
  return {
    lists,
    codes: {
      countries: codesOf(lists.countries, "alpha_2"),
      currencies: codesOf(lists.currencies, "code"),
      invoiceTypes: codesOf(lists["invoice-types"], "code"),
    },
    source: sourceOf(lists, options.loaded?.folder),
  };
}

function builtInLists(
  serviceCodes: readonly ServiceCode[],
  currencies: boolean,
): Record<string, readonly object[]> {
  return {
    countries: COUNTRIES,
    currencies: currencies ? builtInCurrencies() : [],
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
