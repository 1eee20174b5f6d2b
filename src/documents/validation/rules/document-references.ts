import { parseIrn } from "../../../crypto/irn.ts";
import type { Violation } from "../../../errors.ts";
import { entries, isObject, type Rule } from "./types.ts";

/** Credit and debit notes correct an earlier invoice, so they must say which one. */
const CORRECTIONS = new Map([
  ["380", "a credit note"],
  ["393", "a self-billed credit note"],
  ["384", "a debit note"],
]);

/**
 * Clients with UN/CEFACT habits send 380 for an invoice: in UN/CEFACT 1001 it is the commercial
 * invoice, in this API's list (and the authority's) 380 is the credit note and 381 the invoice. The
 * refusal says so, or the integrator goes looking for an invoice to reference.
 */
const HINTS = new Map([
  [
    "380",
    "; if this is an invoice, not a credit note: a commercial invoice is 381 in this API's list (resources/invoices-types), where 380 is the credit note (UN/CEFACT's 380 is the commercial invoice)",
  ],
]);

const SINGLE_REFERENCES = [
  "dispatch_document_reference",
  "receipt_document_reference",
  "originator_document_reference",
  "contract_document_reference",
] as const;

export const documentReferences: Rule = {
  name: "document_references",
  severity: "error",
  check(doc) {
    const out: Violation[] = [];
    const code = typeof doc.invoice_type_code === "string" ? doc.invoice_type_code : undefined;
    const kind = code === undefined ? undefined : CORRECTIONS.get(code);
    if (kind && (!Array.isArray(doc.billing_reference) || doc.billing_reference.length === 0)) {
      out.push({
        path: "billing_reference",
        rule: "billing_reference_required",
        message: `invoice_type_code ${code} is ${kind}: billing_reference must name at least one invoice it corrects${HINTS.get(code as string) ?? ""}`,
        related: ["invoice_type_code"],
      });
    }
    const references: [unknown, string][] = entries(doc.billing_reference, "billing_reference").map(
      ([r, at]) => [r, at],
    );
    for (const field of SINGLE_REFERENCES) references.push([doc[field], field]);
    for (const [reference, at] of references) {
      if (!isObject(reference) || typeof reference.irn !== "string") continue;
      const parsed = parseIrn(reference.irn);
      if ("error" in parsed) {
        out.push({ path: `${at}.irn`, rule: "reference_irn", message: parsed.error, actual: reference.irn });
      }
    }
    return out;
  },
};
