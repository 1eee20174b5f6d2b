import type { Violation } from "../../../errors.ts";
import { isBlank } from "./lenient.ts";
import { entries, isObject, type Rule } from "./types.ts";

/*
 * What the authority (MBS) is quoted refusing that no other rule covers, so that an integrator
 * learns it at `validate` rather than when the signed invoice is refused on its way there (the
 * connector passes the document on as signed, unknown fields included). Whether each is an error or
 * a warning follows the strength of the evidence (the MBS spec, section 3): a refusal quoted with
 * its words and contradicted by nothing is an error; one that an access point's published schema
 * contradicts, or that real ERPs' invoices would break, is a warning.
 */

/** Absent, null or blank text: what a Go validator's `required` refuses. */
const missing = (value: unknown) =>
  value === undefined || value === null || (typeof value === "string" && isBlank(value));

/**
 * A service line with an `isic_code` names its `service_category`: MBS answers
 * `invoicerequest.invoice.invoiceline[0].service_category is required when isic_code is provided`.
 * An error: nothing contradicts it, and only clients that already follow MBS's service-line fields
 * send `isic_code` at all (both fields are beyond this API's document and kept as sent).
 */
export const serviceCategory: Rule = {
  name: "service_category",
  severity: "error",
  check(doc) {
    const out: Violation[] = [];
    for (const [line, at] of entries(doc.invoice_line, "invoice_line")) {
      if (missing(line.isic_code) || !missing(line.service_category)) continue;
      out.push({
        path: `${at}.service_category`,
        rule: "service_category_required",
        message:
          "is required when isic_code is given: the tax authority refuses a service line with an isic_code and no service_category",
        related: [`${at}.isic_code`],
      });
    }
    return out;
  },
};

/** MBS's reported minimum for `business_description`. */
const DESCRIPTION_MIN = 5;

/**
 * Refusals reported by integrators that other evidence disputes, as warnings:
 * - a line without `item.description` (MBS quoted: `…invoiceline[0].item.description is required`),
 *   but an access point's published schema calls it optional, and ERPs and point-of-sale systems
 *   send only the item's name: refusing them on this evidence would stop invoices that may well
 *   pass;
 * - a party's `business_description` under 5 characters ("reported refused" by one integrator;
 *   the authority's collection marks the field optional with no minimum).
 */
export const authorityDisputed: Rule = {
  name: "authority_disputed",
  severity: "warning",
  check(doc) {
    const out: Violation[] = [];
    for (const party of ["accounting_supplier_party", "accounting_customer_party"] as const) {
      const holder = doc[party];
      const text = isObject(holder) ? holder.business_description : undefined;
      if (typeof text !== "string" || text.length >= DESCRIPTION_MIN) continue;
      out.push({
        path: `${party}.business_description`,
        rule: "business_description_length",
        message: `is ${text.length} character${text.length === 1 ? "" : "s"} long: the tax authority is reported to refuse a business_description under ${DESCRIPTION_MIN}; describe the business in a few words, or leave the field out`,
        actual: text,
      });
    }
    for (const [line, at] of entries(doc.invoice_line, "invoice_line")) {
      if (!isObject(line.item) || line.item.description !== undefined) continue;
      out.push({
        path: `${at}.item.description`,
        rule: "item_description_missing",
        message:
          "is missing: the tax authority is reported to refuse a line without item.description (an access point's schema calls it optional); send a description to be safe",
        related: [`${at}.item.name`],
      });
    }
    return out;
  },
};
