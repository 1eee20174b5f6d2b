import { Type } from "typebox";
import { INVOICE_STATUSES } from "../invoices/lifecycle.ts";
import { PAYMENT_STATUSES } from "../reference/data.ts";
import type { DashboardService } from "./dashboard-service.ts";
import {
  config,
  DASHBOARD,
  type DashboardApp,
  DocumentQuery,
  Done,
  notice,
  oneOf,
  PAGE,
  send,
  sendUbl,
} from "./page.ts";
import { invoicePage, invoicesPage, outboxPage } from "./views.ts";

const IrnParams = Type.Object({ irn: Type.String({ minLength: 1, maxLength: 100 }) });
const RequeueBody = Type.Object({ back: Type.Optional(oneOf(["invoice", "outbox"])) });
const InvoiceQuery = Type.Object({
  irn: Type.Optional(Type.String({ maxLength: 100 })),
  tin: Type.Optional(Type.String({ format: "tin", maxLength: 40 })),
  business_id: Type.Optional(Type.String({ format: "uuid" })),
  status: Type.Optional(oneOf(INVOICE_STATUSES)),
  payment_status: Type.Optional(oneOf(PAYMENT_STATUSES)),
  from: Type.Optional(Type.String({ format: "date" })),
  to: Type.Optional(Type.String({ format: "date" })),
  after: Type.Optional(Type.String({ maxLength: 40 })),
  after_irn: Type.Optional(Type.String({ maxLength: 100 })),
});

export function invoicePages(
  app: DashboardApp,
  deps: {
    dashboard: Pick<
      DashboardService,
      "invoices" | "businesses" | "invoice" | "invoiceUbl" | "requeue" | "outbox"
    >;
  },
): void {
  const { dashboard } = deps;

  app.get(
    `${DASHBOARD}/invoices`,
    { schema: { ...PAGE, querystring: InvoiceQuery }, config: config("invoices") },
    async (request, reply) => {
      const q = request.query;
      const query = {
        irn: q.irn?.trim() || undefined,
        tin: q.tin,
        business_id: q.business_id?.toLowerCase(),
        status: q.status,
        payment_status: q.payment_status,
        from: q.from,
        to: q.to,
      };
      const after = q.after && q.after_irn ? { signed_at: q.after, irn: q.after_irn } : undefined;
      const [found, businesses] = await Promise.all([
        dashboard.invoices(query, after),
        dashboard.businesses(),
      ]);
      return send(reply, invoicesPage(query, found, businesses));
    },
  );

  app.get(
    `${DASHBOARD}/invoices/:irn`,
    { schema: { ...PAGE, params: IrnParams, querystring: DocumentQuery }, config: config("invoice") },
    async (request, reply) =>
      send(
        reply,
        invoicePage(
          await dashboard.invoice(request.params.irn),
          notice(request.query.done),
          request.query.line,
        ),
      ),
  );

  app.get(
    `${DASHBOARD}/invoices/:irn/xml`,
    { schema: { ...PAGE, params: IrnParams }, config: config("invoice_ubl") },
    async (request, reply) =>
      sendUbl(reply, request.params.irn, await dashboard.invoiceUbl(request.params.irn)),
  );

  app.post(
    `${DASHBOARD}/invoices/:irn/requeue`,
    { schema: { ...PAGE, params: IrnParams, body: RequeueBody }, config: config("requeue") },
    async (request, reply) => {
      const { irn } = request.params;
      const { already } = await dashboard.requeue(irn);
      const back =
        request.body.back === "outbox"
          ? `${DASHBOARD}/outbox`
          : `${DASHBOARD}/invoices/${encodeURIComponent(irn)}`;
      return reply.redirect(`${back}?done=${already ? "already_queued" : "requeued"}`, 303);
    },
  );

  app.get(
    `${DASHBOARD}/outbox`,
    { schema: { ...PAGE, querystring: Done }, config: config("outbox") },
    async (request, reply) => send(reply, outboxPage(await dashboard.outbox(), notice(request.query.done))),
  );
}
