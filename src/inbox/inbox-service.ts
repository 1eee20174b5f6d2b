import type { Principal } from "../businesses/business-service.ts";
import type { Sealer } from "../crypto/sealer.ts";
import { type Db, type Executor, writeTransaction } from "../db/database.ts";
import type { Business, ReceivedStatus } from "../db/schema.ts";
import { openDocument } from "../documents/stored.ts";
import { DomainError, type Violation } from "../errors.ts";
import type { OutboxQueue } from "../outbox/outbox-service.ts";
import type { Plan } from "../outbox/verdict.ts";
import type { WebhookNotifier } from "../webhooks/notifier.ts";
import { inboxReceiving } from "./inbox-receiving.ts";
import type { InboxFilter, InboxRepository, ReceivedRow, ReceivedSummary } from "./inbox-repository.ts";
import type { Validate } from "./received-checks.ts";

export type { Handed, Receipt, Source } from "./inbox-receiving.ts";

/** The most invoices of a page of the inbox. */
export const INBOX_MAX_LENGTH = 200;

const notFound = (irn: string) =>
  new DomainError("invoice_not_found", {
    message: "Invoice not found",
    details: `no invoice with IRN '${irn}' was received by this business`,
  });

/** A received invoice as the inbox lists it. */
export function summaryOf(row: ReceivedSummary) {
  return {
    irn: row.irn,
    source: row.source,
    supplier: { tin: row.supplier_tin, name: row.supplier_name },
    customer_tin: row.customer_tin,
    issue_date: row.issue_date,
    invoice_type_code: row.invoice_type_code,
    currency: row.currency,
    payable_amount: row.payable_amount,
    status: row.status,
    acknowledgement: row.acknowledgement,
    reason: row.reason,
    // Counted when stored: a page of the inbox parses no row's findings.
    warnings: Number(row.warnings),
    received_at: row.received_at,
    decided_at: row.decided_at,
  };
}

/**
 * The buyer's side of the access point: invoices this service's businesses receive from their
 * suppliers, checked, stored once per buyer and IRN, announced to the buyer's webhook, and
 * acknowledged or rejected by the buyer. An acknowledgement of an invoice pulled from the authority
 * is told to it through the outbox, in the decision's transaction.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a service factory: one closure per use case, each short
export function inboxService(deps: {
  db: Db;
  inbox: InboxRepository;
  businesses: { list(tx?: Executor): Promise<Business[]> };
  sealer: Pick<Sealer, "seal" | "open">;
  notifier: Pick<WebhookNotifier, "notifyMany">;
  outbox: Pick<OutboxQueue, "enqueue">;
  /** Checks received documents (the validation pool's, which takes large ones off the event loop). */
  validate?: Validate;
}) {
  const { db, inbox, sealer, outbox } = deps;
  // How invoices arrive (checked, stored once, announced) is a concern of its own.
  const receiving = inboxReceiving(deps);

  async function mine(principal: Principal, irn: string, tx: Executor = db): Promise<ReceivedRow> {
    const row = await inbox.find(principal.businessId, irn, tx);
    if (!row) throw notFound(irn);
    return row;
  }

  /** The buyer's decision, once; a repeat of the same decision is answered as done. */
  async function decide(
    principal: Principal,
    irn: string,
    wanted: Exclude<ReceivedStatus, "RECEIVED">,
    reason: string | null,
    actor: string,
  ) {
    return writeTransaction(db, async (tx) => {
      const row = await mine(principal, irn, tx);
      if (row.status === wanted) return { row, changed: false };
      if (row.status !== "RECEIVED") {
        throw new DomainError("inbox_decision_refused", {
          message: "Invoice already decided",
          details: `invoice '${irn}' was ${row.status.toLowerCase()} on ${row.decided_at}: it cannot be ${wanted.toLowerCase()} now`,
        });
      }
      const at = new Date().toISOString();
      // Only what was pulled from the authority is acknowledged to it; a rejection is this
      // service's record and the buyer's webhook only: MBS documents no way to reject.
      const tell = wanted === "ACKNOWLEDGED" && row.source === "mbs";
      const acknowledgement = tell ? "queued" : wanted === "ACKNOWLEDGED" ? "not_needed" : "none";
      if (!(await inbox.decide(row.id, { status: wanted, acknowledgement, reason, at }, tx))) {
        // Decided meanwhile by another request: answered from what it decided.
        return { row: (await inbox.findById(row.id, tx)) ?? row, changed: false };
      }
      if (tell) {
        await outbox.enqueue(
          "acknowledgement",
          [{ irn, businessId: principal.businessId, payload: JSON.stringify({ receivedId: row.id }) }],
          at,
          tx,
        );
      }
      await inbox.addEvents(
        [
          {
            receivedId: row.id,
            at,
            type: wanted === "ACKNOWLEDGED" ? "acknowledged" : "rejected",
            actor,
            detail: reason === null ? { told: tell ? "authority" : "none" } : { reason },
          },
        ],
        tx,
      );
      const changed = (await inbox.findById(row.id, tx)) ?? row;
      return { row: changed, changed: true };
    });
  }

  return {
    ...receiving,

    async list(principal: Principal, filter: InboxFilter, start: number, length: number) {
      const { rows, total } = await inbox.list(principal.businessId, filter, start, length);
      return { total, start, length, items: rows.map(summaryOf) };
    },

    /** One received invoice: its document as received, what the checks found, its history. */
    async read(principal: Principal, irn: string) {
      const row = await mine(principal, irn);
      return {
        ...summaryOf(row),
        checks: JSON.parse(row.checks) as Violation[],
        document: openDocument(row, sealer),
        history: await inbox.events(row.id),
      };
    },

    /** The document of a received invoice, for its PDF. */
    /** A received invoice's row and its stored size; its document parsed only when opened. */
    async document(principal: Principal, irn: string) {
      const row = await mine(principal, irn);
      return {
        row,
        chars: row.document.length + (row.sealed?.length ?? 0),
        open: () => openDocument(row, sealer),
      };
    },

    async acknowledge(principal: Principal, irn: string, actor: string) {
      const { row } = await decide(principal, irn, "ACKNOWLEDGED", null, actor);
      return summaryOf(row);
    },

    async reject(principal: Principal, irn: string, reason: string, actor: string) {
      const { row } = await decide(principal, irn, "REJECTED", reason, actor);
      return summaryOf(row);
    },

    /** What became of telling the authority of an acknowledgement. In the outbox's transaction. */
    async told(
      receivedId: number,
      report: {
        plan: Pick<Plan, "at" | "state" | "attempts" | "error">;
        actor: string;
        answer?: Record<string, unknown>;
      },
      tx: Executor,
    ): Promise<void> {
      const { plan } = report;
      await inbox.setAcknowledgement(receivedId, plan.state === "done" ? "sent" : "failed", plan.at, tx);
      await inbox.addEvents(
        [
          {
            receivedId,
            at: plan.at,
            type: plan.state === "done" ? "acknowledgement_sent" : "acknowledgement_failed",
            actor: report.actor,
            detail: {
              attempts: plan.attempts,
              ...(plan.error === null ? {} : { error: plan.error }),
              ...(report.answer ? { authority_answer: report.answer } : {}),
            },
          },
        ],
        tx,
      );
    },

    counts: (businessId: string) => inbox.counts(businessId),
  };
}

export type InboxService = ReturnType<typeof inboxService>;
