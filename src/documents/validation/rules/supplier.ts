import { isObject, type Rule, str } from "./types.ts";

/** TINs compare without spaces and case, as they are read off certificates and typed in. */
const plainTin = (tin: string) => tin.replace(/\s+/g, "").toUpperCase();

/**
 * The supplier of an invoice is the business that signs it: a supplier TIN other than the one the
 * business registered is most often a wrong company profile in the ERP. A warning by default (an
 * access point signing for a group of companies may have one business per TIN on file but not yet
 * the others); an error when the operator sets EINVOICE_STRICT_SUPPLIER=on.
 */
export const supplierTin: Rule = {
  name: "supplier_tin",
  severity: (ctx) => (ctx.strictSupplier ? "error" : "warning"),
  check(doc, ctx) {
    const registered = ctx.business?.tin;
    const supplier = isObject(doc.accounting_supplier_party) ? doc.accounting_supplier_party : {};
    const declared = str(supplier.tin);
    if (registered === undefined || declared === undefined || declared.length > 40) return [];
    if (plainTin(declared) === plainTin(registered)) return [];
    return [
      {
        path: "accounting_supplier_party.tin",
        rule: "supplier_tin_mismatch",
        message: `is '${declared}', but the business signing this invoice is registered with TIN '${registered}'`,
        expected: registered,
        actual: declared,
        related: ["business_id"],
      },
    ];
  },
};
