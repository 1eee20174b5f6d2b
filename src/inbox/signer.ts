import type { Violation } from "../errors.ts";
import { type Checked, plainTin } from "./received-checks.ts";

type Accepted = Extract<Checked, { accepted: true }>;

/** The business of this service that signed an invoice it handed to another (builtin authority). */
export type Signer = { tin: string; name: string };

/** How much of what the document names is quoted back in the finding. */
const QUOTED = 100;

/**
 * An invoice one business of this service signed for another: its supplier is the business that
 * signed it, whatever its document names. The document's supplier party is only what the signer
 * wrote; the signature is what this service knows, having made it with that business's key. Shown
 * as written, `accounting_supplier_party` would let any business of the service pose, in another's
 * inbox, as any supplier (a TIN and a name it does not own, or the buyer itself) with nothing to
 * see. So the stored and listed supplier (TIN and name, the inbox's supplier filter, the webhook
 * event) is the signer's registration, the document stays as signed, and a document naming another
 * TIN is flagged (`supplier_not_signer`) rather than dropped: a business signing for a sister
 * company of its group does that too (the sign-time rule `supplier_tin` is only a warning unless
 * EINVOICE_STRICT_SUPPLIER is on), and the buyer decides what to make of it.
 */
export function asSigned(checked: Accepted, signer: Signer): Accepted {
  const named = checked.supplierTin;
  const same = named !== null && plainTin(named) === plainTin(signer.tin);
  const warnings: Violation[] = same
    ? checked.warnings
    : [
        {
          path: "accounting_supplier_party.tin",
          rule: "supplier_not_signer",
          message: `names the supplier ${quote(named)}${checked.supplierName === null ? "" : ` (${quote(checked.supplierName)})`}, but the invoice was signed by ${signer.name}, TIN ${signer.tin}, a business of this service: it is listed as that business's`,
          expected: signer.tin,
          actual: named,
        },
        ...checked.warnings,
      ];
  return { ...checked, supplierTin: signer.tin, supplierName: signer.name, warnings };
}

const quote = (text: string | null) =>
  text === null ? "with no TIN" : `'${text.length > QUOTED ? `${text.slice(0, QUOTED)}…` : text}'`;
