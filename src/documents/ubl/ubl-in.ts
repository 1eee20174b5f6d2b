import type { Principal } from "../../businesses/business-service.ts";
import type { BusinessProfiles } from "../../businesses/profiles.ts";
import { DomainError, type Violation } from "../../errors.ts";
import type { UblRead } from "./read.ts";
import type { ReadUbl } from "./ubl-read-pool.ts";

/*
 * The way in for a UBL 2.1 invoice: the body read into this API's document off the event loop (a
 * safe parse, the UBL 2.1 schema, one mapping: ubl-read.ts), the preceding invoice found by its
 * number; then the same validation, signing and delivery as JSON. Every finding on the document
 * names its UBL element beside its field (`xpath`).
 */

export type UblIn = UblRead & {
  /** Findings on the mapped document, each given the XPath of the element its field came from. */
  locate(violations: readonly Violation[]): Violation[];
  /** A refusal of the mapped document, its findings located; any other error as it is. */
  locateError(err: unknown): unknown;
};

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
  /** The body read into the document, on the UBL thread or in place (ubl-read-pool.ts). */
  read: ReadUbl;
  signed?: SignedByNumber;
}) {
  const { profiles, signed } = deps;
  return {
    /** `body` as this API's document for the business of `principal`, or the reasons it cannot be. */
    async read(principal: Principal, body: Buffer | string, irn?: string): Promise<UblIn> {
      const business = await profiles.find(principal.businessId);
      if (!business) {
        throw new DomainError("business_not_found", {
          message: "Business not found",
          details: "the business of these API credentials no longer exists",
        });
      }
      const answer = await deps.read({
        body,
        signer: { businessId: principal.businessId, serviceId: business.service_id, irn },
      });
      if (!answer.ok) throw new DomainError(answer.refusal.code, answer.refusal.options);
      const { document, sources, warnings, rootPath } = answer;
      if (signed)
        await precedingByNumber(
          document,
          business.service_id,
          principal.businessId,
          signed,
          warnings,
          sources,
        );
      const locate = (violations: readonly Violation[]) =>
        violations.map((v) => (v.xpath ? v : { ...v, xpath: xpathOf(sources, v.path) ?? rootPath }));
      return {
        document,
        sources,
        warnings,
        refusals: answer.refusals,
        locate,
        locateError(err) {
          if (!(err instanceof DomainError) || !err.violations) return err;
          for (const v of err.violations) v.xpath ??= xpathOf(sources, v.path);
          return err;
        },
      };
    },
  };
}

export type UblReader = ReturnType<typeof ublReader>;
