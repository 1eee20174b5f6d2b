import { actorOf, type Principal } from "../businesses/business-service.ts";
import { type Db, writeTransaction } from "../db/database.ts";
import type { InvoiceTable } from "../db/schema.ts";
import { DomainError } from "../errors.ts";
import type { TransmissionService } from "../outbox/outbox-service.ts";
import type { InvoiceRepository } from "./invoice-repository.ts";
import type { InvoiceLifecycle, InvoiceStatus } from "./lifecycle.ts";
import { invoiceLoader } from "./records/invoice-queries.ts";

/** `transmit/{IRN}`, the operator's re-queue, and the bounded wait for a delivery both use. */
export function invoiceTransmits(deps: {
  db: Db;
  invoices: Pick<InvoiceRepository, "find" | "findByIrn" | "findState">;
  transmission: Pick<TransmissionService, "openDelivery" | "deliverNow">;
  lifecycle: Pick<InvoiceLifecycle, "queued">;
  transmitWaitMs: number;
}) {
  const { db, invoices, transmission, lifecycle, transmitWaitMs } = deps;
  const { load, loadAny } = invoiceLoader(invoices);

  /** Waits (bounded) for the queued delivery; the answer says where the invoice stands. */
  async function awaitDelivery(irn: string, jobId: number): Promise<void> {
    // The job settles in the transaction that moves the invoice (the lifecycle's delivered and
    // attemptFailed): done means TRANSMITTED, failed means TRANSMISSION_FAILED.
    const job = await transmission.deliverNow(jobId, transmitWaitMs);
    if (job?.state === "done") return;
    if (job?.state === "failed") {
      throw new DomainError("transmission_refused", {
        message: "Transmission failed",
        details: `the tax authority did not accept the invoice: ${job?.last_error ?? "unknown error"}; correct it or call transmit again to retry`,
      });
    }
    const retryAt = job?.next_attempt_at ? Date.parse(job.next_attempt_at) : Date.now();
    const lastError = job?.last_error ? ` (last attempt: ${job.last_error})` : "";
    throw new DomainError("transmission_queued", {
      message: "Transmission queued",
      details: `the tax authority has not confirmed the invoice yet${lastError}; it is queued and will be retried automatically: check lookup/${irn}`,
      publicMessage: "The invoice is signed and queued for transmission; it will be retried automatically.",
      retryAfter: Math.max(1, Math.ceil((retryAt - Date.now()) / 1000)),
    });
  }

  /**
   * Moves an invoice from one of `from` to TRANSMITTING and queues its delivery (the lifecycle's
   * `queued`), in one transaction; answers the job's id. When another request moved it first (a double click, two operators, two
   * transmit calls), answers that request's open job instead, or, when there is none, the state the
   * invoice is in now. Nothing is queued twice: the move is a compare-and-set.
   */
  async function queue(
    row: InvoiceTable,
    from: readonly InvoiceStatus[],
    actor: string,
  ): Promise<{ jobId: number } | { status: InvoiceStatus }> {
    const at = new Date().toISOString();
    return writeTransaction(db, async (tx) => {
      const queued = await lifecycle.queued(row, from, actor, at, tx);
      if (queued !== undefined) return { jobId: queued };
      const open = await transmission.openDelivery(row.irn, tx);
      if (open !== undefined) return { jobId: open };
      const now = await invoices.findState(row.irn, row.business_id, tx);
      return { status: now?.status ?? row.status };
    });
  }

  return {
    awaitDelivery,

    /** Transmitting an invoice the authority already holds sends nothing again. */
    async transmit(principal: Principal, irn: string) {
      const row = await load(principal, irn);
      if (row.status === "TRANSMITTED") return { alreadyTransmitted: true };
      // A second round only when the last attempt failed between our move and our look.
      for (let round = 0; round < 3; round++) {
        const queued = await queue(row, ["SIGNED", "TRANSMISSION_FAILED"], actorOf(principal));
        if ("jobId" in queued) {
          await awaitDelivery(irn, queued.jobId);
          return { alreadyTransmitted: false };
        }
        if (queued.status === "TRANSMITTED") return { alreadyTransmitted: true };
      }
      throw new DomainError("service_unavailable", {
        message: "Service temporarily unavailable",
        details: `invoice '${irn}' is changing state under concurrent transmissions; retry after the indicated delay`,
        retryAfter: 1,
      });
    },

    /**
     * The operator's re-queue of a failed transmission, for any business: the workers deliver it
     * (`lookup/{IRN}` tells when). Only TRANSMISSION_FAILED: whether and when to transmit a signed
     * invoice is its business's decision. One already queued again (a double click) stays queued.
     */
    async requeue(irn: string, actor: string): Promise<{ job_id: number; already: boolean }> {
      const row = await loadAny(irn);
      let status = row.status;
      if (status === "TRANSMISSION_FAILED") {
        const queued = await queue(row, ["TRANSMISSION_FAILED"], actor);
        if ("jobId" in queued) return { job_id: queued.jobId, already: false };
        status = queued.status;
      } else if (status === "TRANSMITTING") {
        // Queued already, by a re-queue a moment ago (a double click) or by its business.
        const open = await transmission.openDelivery(irn, db);
        if (open !== undefined) return { job_id: open, already: true };
      }
      throw new DomainError("requeue_refused", {
        message: "Invoice not re-queued",
        details: `invoice '${irn}' is ${status}: only an invoice whose transmission failed can be re-queued`,
      });
    },
  };
}

export type InvoiceTransmits = ReturnType<typeof invoiceTransmits>;
