import cookie from "@fastify/cookie";
import formbody from "@fastify/formbody";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ERROR_STATUS, fromFrameworkError } from "../http/error-mapper.ts";
import { INVOICE_STATUSES } from "../invoices/lifecycle.ts";
import { PAYMENT_STATUSES } from "../reference/data.ts";
import { businessPages } from "./business-pages.ts";
import {
  cleanFields,
  dashboardOff,
  htmlErrorHandler,
  refuseForeignForms,
  requireSignIn,
  securityHeaders,
  unknownPages,
} from "./guards.ts";
import { config, DASHBOARD, Done, notice, oneOf, PAGE, send, stylesheetRoute } from "./page.ts";
import type { DashboardService } from "./service.ts";
import { operatorSession, sessionCheck, signInRoutes } from "./session.ts";
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

/**
 * The operator dashboard, behind the operator password from config (see session.ts). Forms are
 * refused from other origins: the cookie is SameSite=Strict and a POST whose Origin is another site
 * is a 403.
 */
export function dashboardRoutes(deps: {
  dashboard: DashboardService;
  operatorPassword: string | undefined;
  pepper: Buffer;
}): FastifyPluginAsyncTypebox {
  const { dashboard, operatorPassword, pepper } = deps;
  return async (app) => {
    const signedIn = sessionCheck(operatorPassword);

    app.setErrorHandler(htmlErrorHandler({ statusOf: ERROR_STATUS, fromFrameworkError, signedIn }));
    app.addHook("onSend", securityHeaders);

    if (!operatorPassword) {
      dashboardOff(app);
      return;
    }

    const session = operatorSession({ operatorPassword, pepper });
    await app.register(cookie, { secret: session.cookieSecret });
    // Forms post url-encoded bodies; the parser is registered for these pages only, not the API.
    await app.register(formbody);

    app.addHook("onRequest", refuseForeignForms);
    app.addHook("onRequest", requireSignIn(signedIn));
    app.addHook("preValidation", cleanFields);

    stylesheetRoute(app);

    signInRoutes(app, session);

    businessPages(app, { dashboard });

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
      { schema: { ...PAGE, params: IrnParams, querystring: Done }, config: config("invoice") },
      async (request, reply) =>
        send(reply, invoicePage(await dashboard.invoice(request.params.irn), notice(request.query.done))),
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

    unknownPages(app);
  };
}
