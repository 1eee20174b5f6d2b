import cookie from "@fastify/cookie";
import formbody from "@fastify/formbody";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { securityHeaders } from "../html/headers.ts";
import { ERROR_STATUS, fromFrameworkError } from "../http/error-mapper.ts";
import { businessPages } from "./business-pages.ts";
import type { DashboardService } from "./dashboard-service.ts";
import {
  cleanFields,
  dashboardOff,
  htmlErrorHandler,
  refuseForeignForms,
  requireSignIn,
  unknownPages,
} from "./guards.ts";
import { inboxPages } from "./inbox-pages.ts";
import { invoicePages } from "./invoice-pages.ts";
import { stylesheetRoute } from "./page.ts";
import { operatorSession, sessionCheck, signInRoutes } from "./session.ts";

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
    const sessions = sessionCheck(operatorPassword, dashboard);
    const { signedIn } = sessions;

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

    app.addHook("onRequest", sessions.fresh);
    app.addHook("onRequest", refuseForeignForms);
    app.addHook("onRequest", requireSignIn(signedIn));
    app.addHook("preValidation", cleanFields);

    stylesheetRoute(app);

    signInRoutes(app, { passwordMatches: session.passwordMatches, sessions });

    businessPages(app, { dashboard });
    invoicePages(app, { dashboard });
    inboxPages(app, { dashboard });

    unknownPages(app);
  };
}
