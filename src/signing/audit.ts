import type { BusinessRepository } from "../businesses/repository.ts";
import type { InvoiceRepository } from "../invoices/repository.ts";
import { openDocument } from "../invoices/stored-document.ts";
import type { Sealer } from "../keys/sealer.ts";
import type { Signer } from "./signer.ts";

export type Break = { business_id: string; irn: string | null; chain_seq: number | null; reason: string };

const PAGE = 1000;

/**
 * Walks every business's hash chain and re-verifies each link: its position, its previous hash, the
 * hash of its signed content and its signature; then that the business's recorded head is the last
 * link (so a deleted tail is found too).
 */
export function auditService(deps: {
  businesses: Pick<BusinessRepository, "list" | "findById">;
  invoices: Pick<InvoiceRepository, "chainPage">;
  sealer: Pick<Sealer, "open">;
  signer: Pick<Signer, "verify">;
}) {
  const { businesses, invoices, sealer, signer } = deps;
  return {
    async verify(businessId?: string): Promise<{ checked: number; broken: Break[] }> {
      const targets = businessId
        ? [await businesses.findById(businessId)].filter((b) => b !== undefined)
        : await businesses.list();
      if (businessId && targets.length === 0) throw new Error(`business ${businessId} does not exist`);
      let checked = 0;
      const broken: Break[] = [];
      for (const business of targets) {
        let expectedSeq = 1;
        let previous: string | null = null;
        for (;;) {
          const page = await invoices.chainPage(business.id, expectedSeq - 1, PAGE);
          for (const row of page) {
            checked += 1;
            const fail = (reason: string) =>
              broken.push({ business_id: business.id, irn: row.irn, chain_seq: row.chain_seq, reason });
            if (row.chain_seq !== expectedSeq)
              fail(
                `chain position ${String(row.chain_seq)} where ${expectedSeq} was expected: a link is missing`,
              );
            if (row.previous_hash !== previous)
              fail(
                `previous_hash ${String(row.previous_hash)} is not the hash of the link before (${String(previous)})`,
              );
            if (!row.hash || !row.signature || !row.kid) {
              fail("the invoice carries no signature");
            } else {
              let problem: string | null;
              try {
                const document = openDocument(row, sealer);
                const fields = {
                  irn: row.irn,
                  business_id: row.business_id,
                  signed_at: row.signed_at,
                  previous_hash: row.previous_hash,
                  document,
                };
                problem = signer.verify(fields, {
                  alg: "EdDSA",
                  kid: row.kid,
                  hash: row.hash,
                  value: row.signature,
                });
              } catch (err) {
                problem = `the stored record cannot be read: ${(err as Error).message}`;
              }
              if (problem) fail(problem);
            }
            previous = row.hash;
            expectedSeq = (row.chain_seq ?? expectedSeq) + 1;
          }
          if (page.length < PAGE) break;
        }
        if (business.chain_head !== previous || business.chain_length !== expectedSeq - 1) {
          broken.push({
            business_id: business.id,
            irn: null,
            chain_seq: null,
            reason: `the business's chain head (${String(business.chain_head)}, ${business.chain_length} links) is not its last link (${String(previous)}, ${expectedSeq - 1} links): invoices were removed`,
          });
        }
      }
      return { checked, broken };
    },
  };
}

export type AuditService = ReturnType<typeof auditService>;
