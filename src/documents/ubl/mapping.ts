/*
 * THE mapping between a UBL 2.1 Invoice or CreditNote and this API's invoice document: one row per
 * EN 16931 business term (BT) or group (BG), read top to bottom by the reader (read.ts) and the
 * writer (write.ts), and printed as the table of the UBL guide (mapping-table.ts, by group). `ubl`
 * is relative to the row's group; `field` is this API's field. A row with no field is a term that
 * is not carried: the reader lists it as a warning naming its XPath, unless `refuse` says it
 * changes an amount, which is refused (a total this document cannot carry is never dropped
 * silently).
 */

export type Kind = "text" | "date" | "time" | "amount" | "number" | "code";

export type Row = {
  bt: string;
  ubl: string;
  field?: string;
  kind: Kind;
  /** Where the value comes from, or what is done with it, when that is more than a copy. */
  note?: string;
  /** Present and not zero, the document is refused: it changes an amount. */
  refuse?: string;
};

/** The document's own terms, relative to the root (`/Invoice` or `/CreditNote`). */
export const HEADER: readonly Row[] = [
  {
    bt: "BT-24, BT-23",
    ubl: "cbc:CustomizationID, cbc:ProfileID, cbc:UBLVersionID",
    kind: "code",
    note: "read, not kept: which specification and profile the document follows, not its content",
  },
  {
    bt: "BT-1",
    ubl: "cbc:ID",
    field: "irn",
    kind: "text",
    note: "the IRN is `{invoice number}-{service id}-{YYYYMMDD}`: the number's letters and digits (every other character dropped), the business's service id, the issue date; or the `irn` query parameter",
  },
  { bt: "BT-2", ubl: "cbc:IssueDate", field: "issue_date", kind: "date" },
  {
    bt: "—",
    ubl: "cbc:IssueTime",
    field: "issue_time",
    kind: "time",
    note: "hh:mm:ss; an offset or fraction is not carried",
  },
  {
    bt: "BT-9",
    ubl: "cbc:DueDate",
    field: "due_date",
    kind: "date",
    note: "Invoice; a CreditNote's is its first `cac:PaymentMeans/cbc:PaymentDueDate`",
  },
  {
    bt: "BT-3",
    ubl: "cbc:InvoiceTypeCode | cbc:CreditNoteTypeCode",
    field: "invoice_type_code",
    kind: "code",
    note: "UN/CEFACT 1001 to the authority's list by meaning: 380 → 381, 381 → 380, 383 → 384 (codes.ts)",
  },
  { bt: "BT-22", ubl: "cbc:Note", field: "note", kind: "text", note: "several notes joined by a line break" },
  { bt: "BT-7", ubl: "cbc:TaxPointDate", field: "tax_point_date", kind: "date" },
  { bt: "BT-5", ubl: "cbc:DocumentCurrencyCode", field: "document_currency_code", kind: "code" },
  {
    bt: "BT-6",
    ubl: "cbc:TaxCurrencyCode",
    field: "tax_currency_code",
    kind: "code",
    note: "the document currency when absent",
  },
  { bt: "BT-19", ubl: "cbc:AccountingCost", kind: "text", note: "not carried: no field" },
  { bt: "BT-10", ubl: "cbc:BuyerReference", kind: "text", note: "not carried: no field" },
  {
    bt: "BT-73",
    ubl: "cac:InvoicePeriod/cbc:StartDate",
    field: "invoice_delivery_period.start_date",
    kind: "date",
  },
  {
    bt: "BT-74",
    ubl: "cac:InvoicePeriod/cbc:EndDate",
    field: "invoice_delivery_period.end_date",
    kind: "date",
  },
  { bt: "BT-13", ubl: "cac:OrderReference/cbc:ID", field: "order_reference", kind: "text" },
  {
    bt: "BT-25, BT-26",
    ubl: "cac:BillingReference/cac:InvoiceDocumentReference/(cbc:ID, cbc:IssueDate)",
    field: "billing_reference[].(irn, issue_date)",
    kind: "text",
    note: "an ID that is an IRN is kept; another is taken as the invoice number of an invoice signed here and made an IRN by the rule of BT-1 with its issue date",
  },
  {
    bt: "BG-24",
    ubl: "cac:AdditionalDocumentReference",
    kind: "text",
    note: "the IRN, `QR` and `SIGNATURE` references that UBL out writes are read as this document's own; others are not carried",
  },
  {
    bt: "BT-16, BT-15, BT-17, BT-12",
    ubl: "cac:DespatchDocumentReference, cac:ReceiptDocumentReference, cac:OriginatorDocumentReference, cac:ContractDocumentReference",
    field:
      "dispatch_document_reference, receipt_document_reference, originator_document_reference, contract_document_reference",
    kind: "text",
    note: "kept when the ID is an IRN and an issue date is given (this API's references are to signed invoices); not carried otherwise",
  },
  { bt: "BT-72", ubl: "cac:Delivery/cbc:ActualDeliveryDate", field: "actual_delivery_date", kind: "date" },
  { bt: "BT-20", ubl: "cac:PaymentTerms/cbc:Note", field: "payment_terms_note", kind: "text" },
];

/** A party (`cac:AccountingSupplierParty/cac:Party`, `cac:AccountingCustomerParty/cac:Party`). */
export const PARTY: readonly Row[] = [
  {
    bt: "BT-27, BT-44",
    ubl: "cac:PartyLegalEntity/cbc:RegistrationName",
    field: "party_name",
    kind: "text",
    note: "else the trading name, `cac:PartyName/cbc:Name` (BT-28, BT-45)",
  },
  {
    bt: "BT-31, BT-48",
    ubl: "cac:PartyTaxScheme/cbc:CompanyID",
    field: "tin",
    kind: "text",
    note: "with or without an `NG` prefix; a foreign VAT number (another country's prefix) is not carried",
  },
  {
    bt: "BT-30, BT-47",
    ubl: "cac:PartyLegalEntity/cbc:CompanyID",
    kind: "text",
    note: "not carried: no field",
  },
  {
    bt: "BT-33",
    ubl: "cac:PartyLegalEntity/cbc:CompanyLegalForm",
    field: "business_description",
    kind: "text",
    note: "the seller's additional legal information; UBL's, not EN 16931's, for the customer",
  },
  { bt: "BT-43, BT-58", ubl: "cac:Contact/cbc:ElectronicMail", field: "email", kind: "text" },
  {
    bt: "BT-42, BT-57",
    ubl: "cac:Contact/cbc:Telephone",
    field: "telephone",
    kind: "text",
    note: "spaces, dots, hyphens and brackets dropped; a Nigerian number's leading 0 is +234 (`0803 123 4567` is `+2348031234567`); one with no country code otherwise (`23434234`) is not carried",
  },
  {
    bt: "BT-35, BT-36, BT-162",
    ubl: "cac:PostalAddress/(cbc:StreetName, cbc:AdditionalStreetName, cac:AddressLine/cbc:Line)",
    field: "postal_address.street_name",
    kind: "text",
    note: "joined by ', '",
  },
  {
    bt: "BT-37, BT-52",
    ubl: "cac:PostalAddress/cbc:CityName",
    field: "postal_address.city_name",
    kind: "text",
  },
  {
    bt: "BT-38, BT-53",
    ubl: "cac:PostalAddress/cbc:PostalZone",
    field: "postal_address.postal_zone",
    kind: "text",
  },
  {
    bt: "BT-39, BT-54",
    ubl: "cac:PostalAddress/cbc:CountrySubentity",
    field: "postal_address.state",
    kind: "code",
    note: "the state's code, NG-XX",
  },
  {
    bt: "—",
    ubl: "cac:PostalAddress/cbc:District",
    field: "postal_address.lga",
    kind: "code",
    note: "the LGA's code, NG-XX-YYY (UBL 2.1's district; EN 16931 has no term for it)",
  },
  {
    bt: "BT-40, BT-55",
    ubl: "cac:PostalAddress/cac:Country/cbc:IdentificationCode",
    field: "postal_address.country",
    kind: "code",
  },
];

/** A line (`cac:InvoiceLine` or `cac:CreditNoteLine`), BG-25. */
export const LINE: readonly Row[] = [
  {
    bt: "BT-129",
    ubl: "cbc:InvoicedQuantity | cbc:CreditedQuantity",
    field: "invoiced_quantity",
    kind: "number",
    note: "may be negative (a return or a correction), never 0; a positive quantity on a negative line that it gives exactly with the opposite sign (6 × 18.33 on −109.98) is read as negative, with the warning `ubl_read_as_return`",
  },
  {
    bt: "BT-130",
    ubl: "(the quantity)/@unitCode",
    field: "price.price_unit",
    kind: "code",
    note: "when the price has no `cbc:PriceType`; C62 (one) is no unit",
  },
  { bt: "BT-131", ubl: "cbc:LineExtensionAmount", field: "line_extension_amount", kind: "amount" },
  {
    bt: "BG-27",
    ubl: "cac:AllowanceCharge[cbc:ChargeIndicator = false]/cbc:Amount",
    field: "discount_amount",
    kind: "amount",
    note: "several are added up; `cbc:MultiplierFactorNumeric` of a single one is `discount_rate`",
  },
  {
    bt: "BG-28",
    ubl: "cac:AllowanceCharge[cbc:ChargeIndicator = true]/cbc:Amount",
    field: "fee_amount",
    kind: "amount",
    note: "several are added up; `cbc:MultiplierFactorNumeric` of a single one is `fee_rate`",
  },
  { bt: "BT-154", ubl: "cac:Item/cbc:Description", field: "item.description", kind: "text" },
  { bt: "BT-153", ubl: "cac:Item/cbc:Name", field: "item.name", kind: "text" },
  {
    bt: "BT-155",
    ubl: "cac:Item/cac:SellersItemIdentification/cbc:ID",
    field: "item.sellers_item_identification",
    kind: "text",
  },
  {
    bt: "BT-158",
    ubl: "cac:Item/cac:CommodityClassification/cbc:ItemClassificationCode[@listID = 'HS']",
    field: "hsn_code",
    kind: "code",
    note: "six digits are written NNNN.NN",
  },
  {
    bt: "—",
    ubl: "cac:Item/cac:CommodityClassification/cbc:ItemClassificationCode[@listID = 'HS']/@name",
    field: "product_category",
    kind: "text",
    note: "the code's name (UBL's CodeType attribute): EN 16931 has no term for it",
  },
  {
    bt: "BT-151, BT-152",
    ubl: "cac:Item/cac:ClassifiedTaxCategory/(cbc:ID, cbc:Percent)",
    field: "tax_category.(id, percent)",
    kind: "code",
    note: "UNCL 5305 through the VAT table (codes.ts)",
  },
  { bt: "BT-146", ubl: "cac:Price/cbc:PriceAmount", field: "price.price_amount", kind: "amount" },
  { bt: "BT-149", ubl: "cac:Price/cbc:BaseQuantity", field: "price.base_quantity", kind: "number" },
  { bt: "—", ubl: "cac:Price/cbc:PriceType", field: "price.price_unit", kind: "text" },
];

/** The document's allowances and charges (`cac:AllowanceCharge`), BG-20 and BG-21. */
export const ALLOWANCE: readonly Row[] = [
  { bt: "BG-20/21", ubl: "cbc:ChargeIndicator", field: "charge_indicator", kind: "code" },
  { bt: "BT-98, BT-105", ubl: "cbc:AllowanceChargeReasonCode", field: "reason_code", kind: "code" },
  { bt: "BT-97, BT-104", ubl: "cbc:AllowanceChargeReason", field: "reason", kind: "text" },
  { bt: "BT-92, BT-99", ubl: "cbc:Amount", field: "amount", kind: "amount" },
  {
    bt: "BT-95, BT-96, BT-102, BT-103",
    ubl: "cac:TaxCategory/(cbc:ID, cbc:Percent)",
    field: "tax_category.(id, percent)",
    kind: "code",
  },
];

/** The VAT breakdown: the `cac:TaxTotal` in the document currency, BG-23 under BT-110. */
export const VAT: readonly Row[] = [
  { bt: "BT-110", ubl: "cbc:TaxAmount", field: "tax_total[0].tax_amount", kind: "amount" },
  {
    bt: "BT-116",
    ubl: "cac:TaxSubtotal/cbc:TaxableAmount",
    field: "tax_subtotal[].taxable_amount",
    kind: "amount",
  },
  { bt: "BT-117", ubl: "cac:TaxSubtotal/cbc:TaxAmount", field: "tax_subtotal[].tax_amount", kind: "amount" },
  {
    bt: "BT-118",
    ubl: "cac:TaxSubtotal/cac:TaxCategory/cbc:ID",
    field: "tax_subtotal[].tax_category.id",
    kind: "code",
    note: "S → STANDARD_VAT, Z → ZERO_VAT, E → ZERO_VAT with its exemption reason, O → ZERO_VAT with exemption code VATEX-EU-O; AE, K, G, L, M refused",
  },
  {
    bt: "BT-119",
    ubl: "cac:TaxSubtotal/cac:TaxCategory/cbc:Percent",
    field: "tax_subtotal[].tax_category.percent",
    kind: "number",
  },
  {
    bt: "BT-120",
    ubl: "cac:TaxSubtotal/cac:TaxCategory/cbc:TaxExemptionReason",
    field: "tax_subtotal[].tax_category.exemption_reason",
    kind: "text",
  },
  {
    bt: "BT-121",
    ubl: "cac:TaxSubtotal/cac:TaxCategory/cbc:TaxExemptionReasonCode",
    field: "tax_subtotal[].tax_category.exemption_reason_code",
    kind: "code",
  },
  {
    bt: "BT-111",
    ubl: "(the cac:TaxTotal in the tax currency)/cbc:TaxAmount",
    field: "tax_amount_in_tax_currency",
    kind: "amount",
    note: "when the tax currency (BT-6) is not the document's",
  },
];

/** The totals (`cac:LegalMonetaryTotal`), BG-22. */
export const TOTALS: readonly Row[] = [
  {
    bt: "BT-106",
    ubl: "cbc:LineExtensionAmount",
    field: "legal_monetary_total.line_extension_amount",
    kind: "amount",
  },
  {
    bt: "BT-109",
    ubl: "cbc:TaxExclusiveAmount",
    field: "legal_monetary_total.tax_exclusive_amount",
    kind: "amount",
  },
  {
    bt: "BT-112",
    ubl: "cbc:TaxInclusiveAmount",
    field: "legal_monetary_total.tax_inclusive_amount",
    kind: "amount",
  },
  {
    bt: "BT-107, BT-108",
    ubl: "cbc:AllowanceTotalAmount, cbc:ChargeTotalAmount",
    kind: "amount",
    note: "checked against the sum of the document's allowances and charges, then implied by them",
  },
  {
    bt: "BT-113",
    ubl: "cbc:PrepaidAmount",
    kind: "amount",
    refuse: "this document has no prepaid amount: the payable amount would not be what is owed",
  },
  {
    bt: "BT-114",
    ubl: "cbc:PayableRoundingAmount",
    kind: "amount",
    refuse: "this document has no rounding amount: the payable amount would not add up",
  },
  { bt: "BT-115", ubl: "cbc:PayableAmount", field: "legal_monetary_total.payable_amount", kind: "amount" },
];

/** Payment instructions (`cac:PaymentMeans`), BG-16. */
export const PAYMENT: readonly Row[] = [
  { bt: "BT-81", ubl: "cbc:PaymentMeansCode", field: "payment_means[].payment_means_code", kind: "code" },
  { bt: "BT-9", ubl: "cbc:PaymentDueDate", field: "payment_means[].payment_due_date", kind: "date" },
  {
    bt: "BT-84",
    ubl: "cac:PayeeFinancialAccount/cbc:ID",
    field: "payment_means[].payee_financial_account.id",
    kind: "text",
  },
  {
    bt: "BT-85",
    ubl: "cac:PayeeFinancialAccount/cbc:Name",
    field: "payment_means[].payee_financial_account.name",
    kind: "text",
  },
  {
    bt: "BT-86",
    ubl: "cac:PayeeFinancialAccount/cac:FinancialInstitutionBranch/cbc:ID",
    field: "payment_means[].payee_financial_account.institution",
    kind: "text",
  },
];

/** Rows copied as they are: one element, one field, no rule of their own (the others have code). */
export const plainRows = (rows: readonly Row[]) =>
  rows.filter(
    (r) =>
      r.field && !r.refuse && /^[a-z]+:[A-Za-z]+(\/[a-z]+:[A-Za-z]+)*$/.test(r.ubl) && !/[[(]/.test(r.field),
  );
