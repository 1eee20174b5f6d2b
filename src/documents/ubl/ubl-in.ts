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

/**
 * The largest UBL document read on the request path. Its schema check and its copy out of the
 * parser cost about 0.15 ms a line (a 1,000-line invoice held the event loop 156–235 ms, measured
 * by bench/ubl.ts); 128 KiB keeps one document near 20 ms. A document past it is well formed and
 * within the parse's bounds (it is parsed, about 3 ms, to say so) but refused, not read.
 */
export const UBL_READ_BYTES = 128 * 1024;

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

/**
 * A credit note's preceding invoice named by its number alone (Peppol's BT-26, its date, is
 * optional): the business's IRN made from that number, when exactly one was signed. What the IRN
 * needs, a date, is then the signed invoice's own.
 */
async function precedingByNumber(
  document: Record<string, unknown>,
  serviceId: string,
  businessId: string,
  signed: SignedByNumber,
  warnings: Violation[],
  sources: ReadonlyMap<string, string>,
): Promise<void> {
  const refs = (document.billing_reference ?? []) as Record<string, unknown>[];
  for (const [i, ref] of refs.entries()) {
    if (ref.issue_date !== undefined || typeof ref.irn !== "string") continue;
    const segment = ref.irn.replace(/[^A-Za-z0-9]/g, "");
    if (segment === "") continue;
    const found = await signed(businessId, `${segment}-${serviceId}-`, 2);
    if (found.length !== 1) continue;
    const irn = found[0] as string;
    ref.irn = irn;
    ref.issue_date = `${irn.slice(-8, -4)}-${irn.slice(-4, -2)}-${irn.slice(-2)}`;
    warnings.push({
      path: `billing_reference[${i}]`,
      rule: "ubl_preceding_invoice",
      message: `the preceding invoice, given by its number alone, is ${irn}, signed here: its IRN and issue date are taken from it`,
      xpath: sources.get(`billing_reference[${i}]`) ?? "",
    });
  }
}

/** The IRNs of a business that start with a prefix, at most `limit` (the invoices' records). */
export type SignedByNumber = (businessId: string, prefix: string, limit: number) => Promise<string[]>;

export function ublReader(deps: {
  profiles: Pick<BusinessProfiles, "find">;
  schemas: UblSchemas | undefined;
  signed?: SignedByNumber;
}) {
  const { profiles, schemas, signed } = deps;
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
      const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.length;
      if (bytes > UBL_READ_BYTES) {
        parsed.doc.dispose();
        throw new DomainError("payload_too_large", {
          message: "Request body too large",
          details: `a UBL document of ${Math.ceil(bytes / 1024)} KiB: at most ${UBL_READ_BYTES / 1024} KiB (about 120 invoice lines) is read as UBL; send a larger invoice as this API's JSON document`,
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
      if (signed) {
        const { document, sources } = read;
        await precedingByNumber(
          document,
          business.service_id,
          principal.businessId,
          signed,
          read.warnings,
          sources,
        );
      }
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
