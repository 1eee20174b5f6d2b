import type { Principal } from "../../businesses/business-service.ts";
import { canonicalBusinessId } from "../../businesses/ids.ts";
import type { BusinessProfiles } from "../../businesses/profiles.ts";
import { irnProblem } from "../../crypto/irn.ts";
import { DomainError } from "../../errors.ts";
import type { InvoiceRepository } from "../invoice-repository.ts";

/** `irn/validate`: whether an IRN may be used, before any invoice is signed under it. */
export function irnCheck(deps: {
  invoices: Pick<InvoiceRepository, "exists">;
  profiles: Pick<BusinessProfiles, "find">;
}) {
  const { invoices, profiles } = deps;
  return {
    /** The IRN fits the business's template and is not registered yet. */
    async validateIrn(principal: Principal, input: { irn: string; business_id: string }) {
      const business =
        canonicalBusinessId(input.business_id) === principal.businessId
          ? await profiles.find(principal.businessId)
          : undefined;
      const fail = (reason: string) =>
        new DomainError("irn_invalid", {
          message: "error has occurred",
          details: `IRN validation failed for business ${input.business_id}: ${reason}`,
          publicMessage:
            "IRN validation failed. Check the IRN's format and confirm this is not a duplicate request.",
        });
      if (!business)
        throw fail("the business does not exist or is not the business of these API credentials");
      const problem = irnProblem(input.irn, business.service_id);
      if (problem) throw fail(problem);
      if (await invoices.exists(input.irn)) throw fail(`IRN '${input.irn}' is already registered`);
      return { ok: true as const };
    },
  };
}

export type IrnCheck = ReturnType<typeof irnCheck>;
