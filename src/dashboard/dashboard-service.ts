import type { BusinessService, NewBusiness } from "../businesses/business-service.ts";
import { DomainError } from "../errors.ts";
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
}) {
  const { repository, businesses, records, transmits, transmission } = deps;

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
      const business = await businesses.find(id);
      if (!business) {
        throw new DomainError("business_not_found", {
          message: "Business not found",
          details: `no business has the id '${id}'`,
        });
      }
      return { business, keys: await businesses.keys(id) };
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
