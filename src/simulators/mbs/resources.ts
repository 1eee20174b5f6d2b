// The reference lists (`GET /api/v1/invoice/resources/{list}`): small but real extracts, enough for a
// client to read the shape and find the codes the example invoices use. The authority's full lists
// are much longer (249 countries, ~120 currencies); nothing here claims to be complete.

type Row = Record<string, string>;

const pairs = (rows: readonly (readonly [string, string])[], a = "code", b = "value"): Row[] =>
  rows.map(([x, y]) => ({ [a]: x, [b]: y }));

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

export const RESOURCES: Readonly<Record<string, readonly object[]>> = {
  countries: [
    { alpha_2: "NG", alpha_3: "NGA", name: "Nigeria" },
    { alpha_2: "GH", alpha_3: "GHA", name: "Ghana" },
    { alpha_2: "BJ", alpha_3: "BEN", name: "Benin" },
    { alpha_2: "CM", alpha_3: "CMR", name: "Cameroon" },
    { alpha_2: "GB", alpha_3: "GBR", name: "United Kingdom" },
    { alpha_2: "US", alpha_3: "USA", name: "United States of America" },
    { alpha_2: "CN", alpha_3: "CHN", name: "China" },
  ],
  currencies: [
    { code: "NGN", name: "Nigerian Naira", symbol: "₦", numeric: "566" },
    { code: "USD", name: "US Dollar", symbol: "$", numeric: "840" },
    { code: "EUR", name: "Euro", symbol: "€", numeric: "978" },
    { code: "GBP", name: "Pound Sterling", symbol: "£", numeric: "826" },
    { code: "GHS", name: "Ghana Cedi", symbol: "GH₵", numeric: "936" },
    { code: "XOF", name: "CFA Franc BCEAO", symbol: "CFA", numeric: "952" },
    { code: "CNY", name: "Yuan Renminbi", symbol: "¥", numeric: "156" },
  ],
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
  "tax-categories": [
    { code: "STANDARD_VAT", value: "Standard Value-Added Tax", percent: "7.5" },
    { code: "REDUCED_VAT", value: "Reduced Value-Added Tax", percent: "7.5" },
    { code: "ZERO_VAT", value: "Zero-rated Value-Added Tax", percent: "0.0" },
    { code: "STAMP_DUTY", value: "Stamp Duty", percent: "Not Available" },
    { code: "WITHHOLDING_TAX", value: "Withholding Tax", percent: "Not Available" },
    { code: "EXEMPTED", value: "Exempted", percent: "0.0" },
  ],
  "vat-exemptions": [
    {
      heading_no: "0401",
      harmonized_system_code: "0401.10",
      tariff: "Milk",
      description: "Basic food items",
    },
    { heading_no: "3004", harmonized_system_code: "3004.90", tariff: "Medicaments", description: "Medical" },
    { heading_no: "4901", harmonized_system_code: "4901.99", tariff: "Books", description: "Educational" },
  ],
  "services-codes": pairs([
    ["6201", "Computer programming activities"],
    ["6920", "Accounting, bookkeeping and auditing activities; tax consultancy"],
    ["4923", "Freight transport by road"],
    ["5610", "Restaurants and mobile food service activities"],
  ]),
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
    ["KGM", "Kilogram"],
    ["LTR", "Litre"],
    ["MTR", "Metre"],
    ["BG", "Bag"],
    ["HUR", "Hour"],
  ]),
};
