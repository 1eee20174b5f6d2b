import type { Principal } from "../../businesses/business-service.ts";
import type { BusinessProfiles } from "../../businesses/profiles.ts";
import { capViolations, DomainError, MAX_VIOLATIONS, summarize, type Violation } from "../../errors.ts";
import { readUbl, type UblRead } from "./read.ts";
import type { UblSchemas } from "./schema.ts";
import { copyTree } from "./tree.ts";
import { parseXml, withXml } from "./xml.ts";

/*
 * The way in for a UBL 2.1 invoice: a safe parse (xml.ts), the UBL 2.1 schema (schema.ts), one
 * mapping (read.ts) to this API's document; then the same validation, signing and delivery as JSON.
 * Every finding on the document names its UBL element beside its field (`xpath`).
 */

export type UblIn = UblRead & {
  /** Findings on the mapped document, each given the XPath of the element its field came from. */
  locate(violations: readonly Violation[]): Violation[];
  /** A refusal of the mapped document, its findings located; any other error as it is. */
  locateError(err: unknown): unknown;
};

const NOT_SCHEMA_CHECKED: Violation = {
  path: "(ubl)",
  rule: "ubl_schema_not_checked",
  message:
    "not checked against the UBL 2.1 schema: this service has no copy of it (EINVOICE_UBL_SCHEMAS); its mapping checks each element it reads",
};

function refused(violations: Violation[], what: string): DomainError {
  const { shown, total } = capViolations(violations, MAX_VIOLATIONS, 0);
  return new DomainError("validation_failed", {
    message: "Failed to validate invoice",
    details: summarize(
      violations.map((v) => ({ ...v, path: v.xpath ?? v.path })),
      3,
      total,
    ),
    publicMessage: `The UBL invoice was not accepted: ${what}; see error.violations for each element.`,
    violations: shown,
    violationsTotal: total,
  });
}

/** The nearest element a field (or, for one that is missing, its parent) came from. */
function xpathOf(sources: ReadonlyMap<string, string>, path: string): string | undefined {
  for (let at = path; at !== ""; at = at.replace(/(\.[^.[\]]+|\[\d+\])$/, "")) {
    const found = sources.get(at);
    if (found) return found;
    if (!/(\.[^.[\]]+|\[\d+\])$/.test(at)) break;
  }
  return sources.get("(body)");
}

export function ublReader(deps: {
  profiles: Pick<BusinessProfiles, "find">;
  schemas: UblSchemas | undefined;
}) {
  const { profiles, schemas } = deps;
  return {
    /** `body` as this API's document for the business of `principal`, or the reasons it cannot be. */
    async read(principal: Principal, body: Buffer | string, irn?: string): Promise<UblIn> {
      const parsed = parseXml(body);
      if (!parsed.ok) {
        const { rule, message, line, path } = parsed.refusal;
        throw new DomainError("invalid_request", {
          message: "Invalid request",
          details: `the body is not a UBL 2.1 Invoice or CreditNote this service reads: ${message}${line ? ` (line ${line})` : ""}${path ? ` at ${path}` : ""} [${rule}]`,
        });
      }
      const { tree, schemaFindings } = withXml(parsed.doc, (doc) => ({
        schemaFindings: schemas?.check(doc, parsed.root.kind) ?? [],
        tree: copyTree(doc.root),
      }));
      if (schemaFindings.length > 0) {
        throw refused(
          schemaFindings.map((f) => ({
            path: "(ubl)",
            rule: "ubl_schema",
            message: f.message.trim(),
            ...(f.xpath ? { xpath: f.xpath } : {}),
          })),
          `it breaks the UBL 2.1 schema (${parsed.root.kind})`,
        );
      }
      const business = await profiles.find(principal.businessId);
      if (!business) {
        throw new DomainError("business_not_found", {
          message: "Business not found",
          details: "the business of these API credentials no longer exists",
        });
      }
      const read = readUbl(tree, { businessId: principal.businessId, serviceId: business.service_id, irn });
      if (read.refusals.length > 0)
        throw refused(read.refusals, "it says what this API's document cannot carry");
      const warnings = schemas ? read.warnings : [NOT_SCHEMA_CHECKED, ...read.warnings];
      const locate = (violations: readonly Violation[]) =>
        violations.map((v) => (v.xpath ? v : { ...v, xpath: xpathOf(read.sources, v.path) ?? tree.path }));
      return {
        ...read,
        warnings,
        locate,
        locateError(err) {
          if (!(err instanceof DomainError) || !err.violations) return err;
          for (const v of err.violations) v.xpath ??= xpathOf(read.sources, v.path);
          return err;
        },
      };
    },
  };
}

export type UblReader = ReturnType<typeof ublReader>;
