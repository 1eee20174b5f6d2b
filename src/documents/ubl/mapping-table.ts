import { ALLOWANCE, HEADER, LINE, PARTY, PAYMENT, type Row, TOTALS, VAT } from "./mapping.ts";

/*
 * How the UBL guide (docs/ubl.md) presents the mapping: its rows by group, and where what UBL cannot
 * say comes from. The rows are mapping.ts's, which the reader and the writer use.
 */

type Group = { bg: string; ubl: string; field: string; rows: readonly Row[]; note?: string };

/** Where what UBL cannot say comes from. */
const FROM_ELSEWHERE: readonly { field: string; from: string }[] = [
  { field: "business_id", from: "the credentials: the business the API key belongs to" },
  { field: "irn", from: "the rule of BT-1 with the business's service id, or the `irn` query parameter" },
  { field: "invoice_kind", from: "B2B when the customer has a TIN, else B2C" },
  { field: "payment_status", from: "not set: PENDING until `update/{IRN}` records a payment" },
];

/** Every group, in the order of the guide's table. */
const MAPPING: readonly Group[] = [
  { bg: "—", ubl: "/Invoice | /CreditNote", field: "(document)", rows: HEADER },
  {
    bg: "BG-4, BG-7",
    ubl: "cac:Accounting{Supplier,Customer}Party/cac:Party",
    field: "accounting_{supplier,customer}_party",
    rows: PARTY,
  },
  { bg: "BG-20, BG-21", ubl: "cac:AllowanceCharge", field: "allowance_charge[]", rows: ALLOWANCE },
  { bg: "BG-23", ubl: "cac:TaxTotal", field: "tax_total[0]", rows: VAT },
  { bg: "BG-22", ubl: "cac:LegalMonetaryTotal", field: "legal_monetary_total", rows: TOTALS },
  { bg: "BG-16", ubl: "cac:PaymentMeans", field: "payment_means[]", rows: PAYMENT },
  { bg: "BG-25", ubl: "cac:InvoiceLine | cac:CreditNoteLine", field: "invoice_line[]", rows: LINE },
];

const cell = (text: string) => text.replaceAll("|", "\\|");

/** The mapping as the markdown table of the UBL guide (docs/ubl.md), which a test keeps equal to it. */
export function mappingMarkdown(): string {
  const rows = MAPPING.flatMap((group) => [
    `| **${cell(group.bg)}** | **\`${cell(group.ubl)}\`** | **\`${cell(group.field)}\`** | |`,
    ...group.rows.map(
      (row) =>
        `| ${cell(row.bt)} | \`${cell(row.ubl)}\` | ${row.field ? `\`${cell(row.field)}\`` : "—"} | ${cell(row.refuse ? `refused when present and not zero: ${row.refuse}` : (row.note ?? ""))} |`,
    ),
  ]);
  const elsewhere = FROM_ELSEWHERE.map((f) => `| \`${f.field}\` | ${cell(f.from)} |`);
  return [
    "| EN 16931 | UBL 2.1 | this API's field | how |",
    "|---|---|---|---|",
    ...rows,
    "",
    "| field | where it comes from |",
    "|---|---|",
    ...elsewhere,
  ].join("\n");
}
