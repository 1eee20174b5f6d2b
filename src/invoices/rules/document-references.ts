import { parseIrn } from "../../crypto/irn.ts";
import type { Violation } from "../../errors.ts";
import { entries, isObject, type Rule } from "./types.ts";

/** Credit and debit notes correct an earlier invoice, so they must say which one. */
const CORRECTIONS = new Map([
  ["380", "a credit note"],
  ["393", "a self-billed credit note"],
  ["384", "a debit note"],
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
    const kind =
      typeof doc.invoice_type_code === "string" ? CORRECTIONS.get(doc.invoice_type_code) : undefined;
    if (kind && (!Array.isArray(doc.billing_reference) || doc.billing_reference.length === 0)) {
      out.push({
        path: "billing_reference",
        rule: "billing_reference_required",
        message: `invoice_type_code ${String(doc.invoice_type_code)} is ${kind}: billing_reference must name at least one invoice it corrects`,
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
