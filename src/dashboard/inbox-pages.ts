import { Type } from "typebox";
import { DomainError } from "../errors.ts";
import type { InboxFilter } from "../inbox/inbox-repository.ts";
import type { DashboardService } from "./dashboard-service.ts";
import { inboxPage, RECEIVED_STATUSES, receivedPage } from "./inbox-views.ts";
import {
  config,
  DASHBOARD,
  type DashboardApp,
  DocumentQuery,
  notice,
  oneOf,
  PAGE,
  send,
  sendUbl,
} from "./page.ts";

const BusinessParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
const ReceivedParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  irn: Type.String({ minLength: 1, maxLength: 100 }),
});
const InboxQuery = Type.Object({
  status: Type.Optional(oneOf(RECEIVED_STATUSES)),
  supplier_tin: Type.Optional(Type.String({ maxLength: 40 })),
  from: Type.Optional(Type.String({ format: "date" })),
  to: Type.Optional(Type.String({ format: "date" })),
  start: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
});
const RejectBody = Type.Object({ reason: Type.String({ maxLength: 1000 }) });

const received = (id: string, irn: string) =>
  `${DASHBOARD}/businesses/${encodeURIComponent(id)}/inbox/${encodeURIComponent(irn)}`;

/**
 * The invoices each business received as the buyer: the list, one invoice with its checks and
 * history, its PDF, and the buyer's decision (acknowledge, or reject with a reason), which the
 * operator makes for the business, recorded under the dashboard's name.
 */
export function inboxPages(
  app: DashboardApp,
  deps: {
    dashboard: Pick<
      DashboardService,
      | "received"
      | "receivedInvoice"
      | "acknowledgeReceived"
      | "rejectReceived"
      | "receivedPdf"
      | "receivedUbl"
    >;
  },
): void {
  const { dashboard } = deps;

  app.get(
    `${DASHBOARD}/businesses/:id/inbox`,
    { schema: { ...PAGE, params: BusinessParams, querystring: InboxQuery }, config: config("inbox") },
    async (request, reply) => {
      const q = request.query;
      const supplierTin = q.supplier_tin?.trim() || undefined;
      const filter: InboxFilter = {
        ...(q.status === undefined ? {} : { status: q.status }),
        ...(supplierTin === undefined ? {} : { supplierTin }),
        ...(q.from === undefined ? {} : { from: q.from }),
        ...(q.to === undefined ? {} : { to: q.to }),
      };
      const data = await dashboard.received(request.params.id, filter, q.start ?? 0);
      return send(reply, inboxPage(data, filter));
    },
  );

  app.get(
    `${DASHBOARD}/businesses/:id/inbox/:irn`,
    { schema: { ...PAGE, params: ReceivedParams, querystring: DocumentQuery }, config: config("received") },
    async (request, reply) => {
      const { id, irn } = request.params;
      const { done, line } = request.query;
      return send(reply, receivedPage(await dashboard.receivedInvoice(id, irn), notice(done), line));
    },
  );

  app.get(
    `${DASHBOARD}/businesses/:id/inbox/:irn/pdf`,
    { schema: { ...PAGE, params: ReceivedParams }, config: config("received_pdf") },
    async (request, reply) => {
      const { id, irn } = request.params;
      const pdf = await dashboard.receivedPdf(id, irn);
      return reply
        .type("application/pdf")
        .header("content-disposition", `attachment; filename="${irn.replace(/[^A-Za-z0-9._-]/g, "_")}.pdf"`)
        .send(pdf);
    },
  );

  app.get(
    `${DASHBOARD}/businesses/:id/inbox/:irn/xml`,
    { schema: { ...PAGE, params: ReceivedParams }, config: config("received_ubl") },
    async (request, reply) => {
      const { id, irn } = request.params;
      return sendUbl(reply, irn, await dashboard.receivedUbl(id, irn));
    },
  );

  app.post(
    `${DASHBOARD}/businesses/:id/inbox/:irn/acknowledge`,
    { schema: { ...PAGE, params: ReceivedParams }, config: config("received_acknowledge") },
    async (request, reply) => {
      const { id, irn } = request.params;
      const done = await dashboard.acknowledgeReceived(id, irn);
      return reply.redirect(`${received(id, done.irn)}?done=inbox_acknowledged`, 303);
    },
  );

  app.post(
    `${DASHBOARD}/businesses/:id/inbox/:irn/reject`,
    { schema: { ...PAGE, params: ReceivedParams, body: RejectBody }, config: config("received_reject") },
    async (request, reply) => {
      const { id, irn } = request.params;
      const reason = request.body.reason.trim();
      if (reason === "") {
        throw new DomainError("invalid_request", {
          message: "Invalid request",
          details: "give the reason for the rejection: the invoice's history keeps it",
        });
      }
      const done = await dashboard.rejectReceived(id, irn, reason);
      return reply.redirect(`${received(id, done.irn)}?done=inbox_rejected`, 303);
    },
  );
}
