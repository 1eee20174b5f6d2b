import { createRequire } from "node:module";
import { DeliveryError, type PaymentUpdate } from "./connector.ts";

// CommonJS, with its own types; ESM's default import would not see `code`.
const currencyCodes = createRequire(import.meta.url)("currency-codes") as {
  code(code: string): { number: string } | undefined;
};

/*
 * This service's documents, payment updates and reports in the shapes of the MBS API (the MBS spec,
 * sections 3 and 5). Both APIs follow UBL names in snake_case, so the invoice document is mostly the
 * same; what differs is listed here, field by field.
 */

/** Fields of ours MBS has no place for, and that say nothing it needs. */
const OURS_ONLY = new Set(["invoice_kind"]);

/**
 * The MBS document of one of our signed documents:
 * - `invoice_type_code` as a string (MBS refuses an integer; ours is a string already, this keeps it so);
 * - `payment_status` PENDING unless the document says otherwise (MBS's default, made explicit);
 * - `invoice_kind` (B2B/B2C, ours) left out;
 * - everything else as signed: parties with TIN and email (both mandatory at MBS and in ours),
 *   amounts as JSON numbers, the contract reference as `{irn, issue_date}`. Fields MBS does not
 *   document (ours kept them as unknown fields, with a warning) go along too: what MBS answers to
 *   an unknown field is not settled, and MBS-only fields (`accounting_cost`, `buyer_reference`,
 *   `payee_party`, …) reach ours exactly that way.
 */
export function mbsDocument(document: Record<string, unknown>): Record<string, unknown> {
  const mapped: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(document)) {
    if (OURS_ONLY.has(field) || value === undefined) continue;
    mapped[field] = value;
  }
  if (typeof mapped.invoice_type_code === "number")
    mapped.invoice_type_code = String(mapped.invoice_type_code);
  mapped.payment_status ??= "PENDING";
  return mapped;
}

/** The body of MBS `PATCH update/{IRN}`: PARTIAL carries the payment's amount and date. */
export function mbsPaymentUpdate(update: PaymentUpdate): Record<string, unknown> {
  const body: Record<string, unknown> = { payment_status: update.payment_status };
  if (update.reference) body.reference = update.reference;
  if (update.payment_status === "PARTIAL") {
    body.amount = update.amount;
    body.payment_update_date = update.payment_update_date;
  }
  return body;
}

/** Our fiscalization report, as its fields are named in `report-fiscalization`. */
type OurReport = {
  irn?: unknown;
  agent_tin?: unknown;
  beneficiary_tin?: unknown;
  currency?: unknown;
  transaction_date?: unknown;
  base_amount?: unknown;
  vat_rate?: unknown;
  vat_calculated?: unknown;
  other_taxes?: unknown;
  total_amount?: unknown;
  vat_status?: unknown;
  item_description?: unknown;
  /** Set by the report service: the IRN, numbered for an invoice's second and later reports. */
  vendor_transaction_id?: unknown;
};

const amountText = (v: unknown) => (typeof v === "number" ? String(v) : typeof v === "string" ? v : "0");

/**
 * The MBS VAT post-payment report of one of ours. MBS wants string amounts, the currency as its ISO
 * 4217 number, and `vatStatus` as a number: 1 when VAT was charged (vat_calculated above zero), 0
 * when not (zero-rated, exempt). The vendor's transaction id is the IRN (numbered for an invoice's
 * second and later reports), which also makes a repeated report recognisable there.
 */
export function mbsVatReport(report: OurReport): Record<string, unknown> {
  const currency =
    typeof report.currency === "string" ? currencyCodes.code(report.currency.toUpperCase()) : undefined;
  if (!currency) {
    throw new DeliveryError(
      `currency ${JSON.stringify(report.currency)} has no ISO 4217 number for MBS`,
      true,
    );
  }
  return {
    agentTin: String(report.agent_tin ?? ""),
    beneficiaryTin: String(report.beneficiary_tin ?? ""),
    currency: Number(currency.number),
    transDate: String(report.transaction_date ?? ""),
    baseAmount: amountText(report.base_amount),
    vatRate: amountText(report.vat_rate),
    vatCalculated: amountText(report.vat_calculated),
    otherTaxes: amountText(report.other_taxes),
    totalAmount: amountText(report.total_amount),
    vatStatus: Number(amountText(report.vat_calculated)) > 0 ? 1 : 0,
    itemDescription: String(report.item_description ?? ""),
    vendorTransactionId: String(report.vendor_transaction_id ?? report.irn ?? ""),
  };
}
