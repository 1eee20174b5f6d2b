import type { InvoiceTable } from "../../db/schema.ts";
import type { InvoiceDocument } from "../../documents/schema.ts";
import { openingBalance } from "../payments/payment-decision.ts";

/**
 * What a sign's row takes from its checked document besides the document itself: worked out where
 * the document is (on the preparation thread for a single sign, whose event loop never parses the
 * body), so the row is built from these few fields.
 */
export type DocumentFacts = Pick<
  InvoiceTable,
  | "irn"
  | "invoice_type_code"
  | "issue_date"
  | "supplier_tin"
  | "customer_tin"
  | "payable_minor"
  | "paid_minor"
  | "currency_digits"
> & { payment_status: string | undefined };

export function documentFacts(document: InvoiceDocument): DocumentFacts {
  const { payable_minor, paid_minor, currency_digits } = openingBalance(document);
  return {
    irn: document.irn,
    invoice_type_code: document.invoice_type_code,
    issue_date: document.issue_date,
    supplier_tin: document.accounting_supplier_party.tin,
    customer_tin: document.accounting_customer_party.tin ?? null,
    payment_status: document.payment_status,
    payable_minor,
    paid_minor,
    currency_digits,
  };
}
