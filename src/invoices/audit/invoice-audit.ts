import type { AuditLogRepository } from "../../audit-log/audit-log-repository.ts";
import type { BusinessRepository } from "../../businesses/business-repository.ts";
import { canonicalBusinessId } from "../../businesses/ids.ts";
import type { Sealer } from "../../crypto/sealer.ts";
import type { Signer } from "../../crypto/signer.ts";
import { formatMinor } from "../../documents/money.ts";
import { openDocument } from "../../documents/stored.ts";
import type { InvoiceRepository } from "../invoice-repository.ts";
import { STATE_AFTER } from "../lifecycle.ts";
import { type Balance, replayPayments } from "../payments/payment-decision.ts";

export type Break = { business_id: string; irn: string | null; chain_seq: number | null; reason: string };

const PAGE = 1000;

/**
 * Walks every business's hash chain and re-verifies each link: its position, its previous hash, the
 * hash of its signed content and its signature; then that the business's recorded head is the last
 * link (so a deleted tail is found too).
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: each check of the audit is a closure of its own
export function auditService(deps: {
  businesses: Pick<BusinessRepository, "list" | "findById">;
  invoices: Pick<InvoiceRepository, "chainPage" | "eventsFor">;
  auditLog: Pick<AuditLogRepository, "entries" | "keys">;
  sealer: Pick<Sealer, "open">;
  signer: Pick<Signer, "verify">;
}) {
  const { businesses, invoices, auditLog, sealer, signer } = deps;
  /** Every credential's creation (and revocation) is in the audit log, each entry with its actor. */
  async function credentialProblems(businessId?: string) {
    const entries = await auditLog.entries(businessId);
    const problems: { business_id: string; reason: string }[] = [];
    for (const e of entries) {
      if (!e.actor)
        problems.push({
          business_id: e.business_id ?? "",
          reason: `audit entry ${e.action} of ${e.subject} has no actor`,
        });
    }
    const logged = new Set(entries.map((e) => `${e.action} ${e.subject}`));
    for (const key of await auditLog.keys(businessId)) {
      if (!logged.has(`key.created ${key.api_key}`)) {
        problems.push({
          business_id: key.business_id,
          reason: `API key ${key.api_key} exists but its creation is not in the audit log`,
        });
      }
      if (key.revoked_at && !logged.has(`key.revoked ${key.api_key}`)) {
        problems.push({
          business_id: key.business_id,
          reason: `API key ${key.api_key} is revoked but its revocation is not in the audit log`,
        });
      }
    }
    return problems;
  }

  return {
    async verify(id?: string): Promise<{ checked: number; broken: Break[] }> {
      const businessId = id === undefined ? undefined : canonicalBusinessId(id);
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
          const histories = new Map<
            string,
            { at: string; type: string; actor: string | null; detail: string }[]
          >();
          for (const event of await invoices.eventsFor(page.map((r) => r.irn))) {
            histories.set(event.irn, [...(histories.get(event.irn) ?? []), event]);
          }
          for (const row of page) {
            for (const reason of historyProblems(row, histories.get(row.irn) ?? [])) {
              broken.push({ business_id: business.id, irn: row.irn, chain_seq: row.chain_seq, reason });
            }
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
      for (const reason of await credentialProblems(businessId)) {
        broken.push({ business_id: reason.business_id, irn: null, chain_seq: null, reason: reason.reason });
      }
      return { checked, broken };
    },
  };
}

export type AuditService = ReturnType<typeof auditService>;

/**
 * An invoice's state must be what its history says: the history starts with its signing, runs
 * forward in time, names an actor for every entry, and its last transmission and payment entries
 * match the stored status and payment status; the payments it records are allowed moves that add up
 * to the stored amount paid.
 */
export function historyProblems(
  row: { status: string; payment_status: string } & Balance,
  history: readonly { at: string; type: string; actor: string | null; detail: string }[],
): string[] {
  const problems: string[] = [];
  if (history[0]?.type !== "signed") problems.push("the history does not start with the signing");
  let status = "SIGNED";
  let signedPayment: string | undefined;
  const payments: { at: string; detail: Record<string, unknown> }[] = [];
  let previous = "";
  for (const event of history) {
    if (!event.actor) problems.push(`history entry ${event.type} at ${event.at} has no actor`);
    if (event.at < previous)
      problems.push(`history entry ${event.type} at ${event.at} is earlier than the one before`);
    previous = event.at;
    const detail = JSON.parse(event.detail) as Record<string, unknown>;
    if (event.type === "signed" && typeof detail.payment_status === "string") {
      signedPayment = detail.payment_status;
    }
    if (event.type === "payment_updated") payments.push({ at: event.at, detail });
    status = STATE_AFTER[event.type] ?? status;
  }
  if (status !== row.status) problems.push(`status is ${row.status} but the history says ${status}`);
  const replayed = replayPayments({ payment_status: signedPayment, balance: row }, payments);
  problems.push(...replayed.problems);
  if (replayed.payment_status !== undefined && replayed.payment_status !== row.payment_status) {
    problems.push(`payment_status is ${row.payment_status} but the history says ${replayed.payment_status}`);
  }
  if (replayed.paid_minor !== row.paid_minor) {
    problems.push(
      `amount_paid is ${formatMinor(row.paid_minor, row.currency_digits)} but the history's payments add up to ${formatMinor(replayed.paid_minor, row.currency_digits)}`,
    );
  }
  return problems;
}
