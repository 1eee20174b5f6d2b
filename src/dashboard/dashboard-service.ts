import type { BusinessService, NewBusiness, Principal } from "../businesses/business-service.ts";
import type { InvoicePdfs } from "../documents/pdf/service.ts";
import { receivedUbl, writeUbl } from "../documents/ubl/write.ts";
import { DomainError } from "../errors.ts";
import type { InboxFilter } from "../inbox/inbox-repository.ts";
import type { InboxService } from "../inbox/inbox-service.ts";
import type { InvoiceQueries } from "../invoices/records/invoice-queries.ts";
import type { InvoiceTransmits } from "../invoices/transmits.ts";
import type { TransmissionService } from "../outbox/outbox-service.ts";
import { qrImage } from "../qr/qr-image.ts";
import type { Cursor, DashboardRepository, InvoiceFilter } from "./dashboard-repository.ts";

/** How the dashboard's changes appear in histories and the audit log. */
export const DASHBOARD_ACTOR = "dashboard";

export const PAGE_SIZE = 50;
const FAILED_SHOWN = 200;

/** The operator's view of the service: every business, every invoice, the outbox. */
export function dashboardService(deps: {
  repository: DashboardRepository;
  businesses: Pick<BusinessService, "add" | "createKey" | "revokeKey" | "find" | "list" | "keys">;
  records: Pick<InvoiceQueries, "operatorRecord">;
  transmits: Pick<InvoiceTransmits, "requeue">;
  transmission: Pick<TransmissionService, "stats" | "authorityHold">;
  /** The invoices businesses received as buyers: the operator reads and decides them as the business. */
  inbox: Pick<InboxService, "list" | "read" | "document" | "acknowledge" | "reject" | "counts">;
  pdfs: Pick<InvoicePdfs, "receivedPdf">;
}) {
  const { repository, businesses, records, transmits, transmission, inbox, pdfs } = deps;

  async function found(id: string) {
    const business = await businesses.find(id);
    if (!business) {
      throw new DomainError("business_not_found", {
        message: "Business not found",
        details: `no business has the id '${id}'`,
      });
    }
    return business;
  }

  /** The business and the principal the inbox answers it as: the operator acts for the business. */
  async function buyer(id: string): Promise<{ business: Awaited<ReturnType<typeof found>>; as: Principal }> {
    const business = await found(id);
    return { business, as: { businessId: business.id, apiKey: DASHBOARD_ACTOR } };
  }

  return {
    async overview() {
      const [totals, outbox, failedTransmissions, hold] = await Promise.all([
        repository.totals(),
        transmission.stats(),
        repository.countFailedTransmissions(),
        transmission.authorityHold(),
      ]);
      return { totals, outbox, failedTransmissions, hold };
    },

    businesses: () => businesses.list(),

    async business(id: string) {
      const business = await found(id);
      const [keys, received] = await Promise.all([businesses.keys(id), inbox.counts(business.id)]);
      return { business, keys, received };
    },

    addBusiness: (input: NewBusiness) => businesses.add(input, DASHBOARD_ACTOR),
    createKey: (businessId: string) => businesses.createKey(businessId, DASHBOARD_ACTOR),
    revokeKey: (apiKey: string) => businesses.revokeKey(apiKey, DASHBOARD_ACTOR),

    /** One page of matching invoices and, when there are more, where the next page starts. */
    async invoices(filter: InvoiceFilter, after: Cursor | undefined) {
      const rows = await repository.searchInvoices(filter, after, PAGE_SIZE + 1);
      const page = rows.slice(0, PAGE_SIZE);
      const last = page.at(-1);
      return {
        rows: page,
        next: rows.length > PAGE_SIZE && last ? { signed_at: last.signed_at, irn: last.irn } : undefined,
      };
    },

    /** The full record, its QR code as an image and its outbox jobs. */
    async invoice(irn: string) {
      const record = await records.operatorRecord(irn);
      const [qr, jobs, business] = await Promise.all([
        qrImage.dataUrl(record.qr_code),
        repository.jobsFor(irn),
        businesses.find(record.business_id),
      ]);
      return { record, qr, jobs, businessName: business?.name ?? record.business_id };
    },

    requeue: (irn: string) => transmits.requeue(irn, DASHBOARD_ACTOR),

    /** One page of the invoices a business received, newest first, from `start`. */
    async received(businessId: string, filter: InboxFilter, start: number) {
      const { business, as } = await buyer(businessId);
      return { business, page: await inbox.list(as, filter, start, PAGE_SIZE) };
    },

    /** One invoice a business received: the document, what the checks found, its history. */
    async receivedInvoice(businessId: string, irn: string) {
      const { business, as } = await buyer(businessId);
      return { business, record: await inbox.read(as, irn) };
    },

    async acknowledgeReceived(businessId: string, irn: string) {
      const { as } = await buyer(businessId);
      return inbox.acknowledge(as, irn, DASHBOARD_ACTOR);
    },

    async rejectReceived(businessId: string, irn: string, reason: string) {
      const { as } = await buyer(businessId);
      return inbox.reject(as, irn, reason, DASHBOARD_ACTOR);
    },

    /** A received invoice as UBL 2.1, measured before it is parsed (as its PDF). */
    async receivedUbl(businessId: string, irn: string) {
      const { as } = await buyer(businessId);
      return receivedUbl(await inbox.document(as, irn));
    },

    /** A signed invoice as UBL 2.1, with its IRN, QR payload and signature. */
    invoiceUbl: async (irn: string) => writeUbl(await records.operatorRecord(irn)),

    /** A received invoice's PDF, rendered in the business's share of the PDF queue. */
    async receivedPdf(businessId: string, irn: string) {
      const { as } = await buyer(businessId);
      return pdfs.receivedPdf(as, irn, inbox);
    },

    /** The last sign-out, which ended every session issued until then (session.ts). */
    lastSignOut: () => repository.lastSignOut(),
    recordSignOut: (at: number) => repository.recordSignOut(at),

    async outbox() {
      const [stats, failedTransmissions, failedWebhooks, hold] = await Promise.all([
        transmission.stats(),
        repository.failedTransmissions(FAILED_SHOWN),
        repository.failedWebhooks(FAILED_SHOWN),
        transmission.authorityHold(),
      ]);
      return { stats, failedTransmissions, failedWebhooks, hold };
    },
  };
}

export type DashboardService = ReturnType<typeof dashboardService>;
