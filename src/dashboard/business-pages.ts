import { Type } from "typebox";
import { DomainError } from "../errors.ts";
import type { DashboardService } from "./dashboard-service.ts";
import { config, DASHBOARD, type DashboardApp, Done, notice, PAGE, send } from "./page.ts";
import { businessesPage, businessPage, newKeyPage, overviewPage } from "./views.ts";

const BusinessBody = Type.Object({
  name: Type.String({ maxLength: 200 }),
  tin: Type.String({ maxLength: 40 }),
});
const BusinessParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
const KeyParams = Type.Object({ apiKey: Type.String({ minLength: 1, maxLength: 200 }) });

export function businessPages(
  app: DashboardApp,
  deps: {
    dashboard: Pick<
      DashboardService,
      "overview" | "businesses" | "addBusiness" | "business" | "createKey" | "revokeKey"
    >;
  },
): void {
  const { dashboard } = deps;

  app.get(DASHBOARD, { schema: PAGE, config: config("overview") }, async (_request, reply) =>
    send(reply, overviewPage(await dashboard.overview())),
  );

  app.get(`${DASHBOARD}/businesses`, { schema: PAGE, config: config("businesses") }, async (_r, reply) =>
    send(reply, businessesPage(await dashboard.businesses())),
  );

  app.post(
    `${DASHBOARD}/businesses`,
    { schema: { ...PAGE, body: BusinessBody }, config: config("business_add") },
    async (request, reply) => {
      try {
        const added = await dashboard.addBusiness(request.body);
        return reply.redirect(
          `${DASHBOARD}/businesses/${encodeURIComponent(added.business_id)}?done=business_added`,
          303,
        );
      } catch (err) {
        if (!(err instanceof DomainError && err.code === "invalid_request")) throw err;
        // The form again, as typed, with what is wrong with it.
        const form = { ...request.body, error: err.details };
        return send(reply, businessesPage(await dashboard.businesses(), form), 400);
      }
    },
  );

  app.get(
    `${DASHBOARD}/businesses/:id`,
    { schema: { ...PAGE, params: BusinessParams, querystring: Done }, config: config("business") },
    async (request, reply) =>
      send(reply, businessPage(await dashboard.business(request.params.id), notice(request.query.done))),
  );

  app.post(
    `${DASHBOARD}/businesses/:id/keys`,
    { schema: { ...PAGE, params: BusinessParams }, config: config("key_create") },
    async (request, reply) => {
      const { business } = await dashboard.business(request.params.id);
      const key = await dashboard.createKey(business.id);
      return send(reply, newKeyPage(business, key));
    },
  );

  app.post(
    `${DASHBOARD}/keys/:apiKey/revoke`,
    { schema: { ...PAGE, params: KeyParams }, config: config("key_revoke") },
    async (request, reply) => {
      const revoked = await dashboard.revokeKey(request.params.apiKey);
      return reply.redirect(
        `${DASHBOARD}/businesses/${encodeURIComponent(revoked.business_id)}?done=key_revoked`,
        303,
      );
    },
  );
}
