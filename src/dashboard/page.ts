import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Html } from "../html/html.ts";
import { STYLE } from "../html/style.ts";
import { NOTICES, type Notice } from "./views.ts";

export const DASHBOARD = "/dashboard";

/** The dashboard plugin's instance: its routes get their request types from their TypeBox schemas. */
export type DashboardApp = Parameters<FastifyPluginAsyncTypebox>[0];

/** Pages for people, not the API: kept out of the OpenAPI document, outside API-KEY authentication. */
export const PAGE = { hide: true } as const;
export const config = (handler: string) => ({ handler: `dashboard.${handler}`, public: true });

/** One message naming the allowed values, where a union of literals would give one per value. */
export const oneOf = <const T extends string>(values: readonly T[]) => Type.Enum([...values]);
export const Done = Type.Object({ done: Type.Optional(oneOf(Object.keys(NOTICES))) });
/** An invoice's page: a notice, and the first of its document's lines to show (document-view.ts). */
export const DocumentQuery = Type.Object({
  ...Done.properties,
  line: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
});

export const send = (reply: FastifyReply, page: Html, status = 200) =>
  reply.code(status).type("text/html; charset=utf-8").send(page.text);

export const notice = (done: string | undefined) => (done ? NOTICES[done as Notice] : undefined);

export function stylesheetRoute(app: DashboardApp): void {
  app.get(`${DASHBOARD}/style.css`, { schema: PAGE, config: config("style") }, async (_request, reply) =>
    reply.type("text/css; charset=utf-8").header("cache-control", "max-age=300").send(STYLE),
  );
}

/** A UBL document to download: the operator's copy of an invoice, named after its IRN. */
export function sendUbl(reply: FastifyReply, irn: string, xml: string) {
  return reply
    .type("application/xml; charset=utf-8")
    .header("content-disposition", `attachment; filename="${irn.replace(/[^A-Za-z0-9._-]/g, "_")}.xml"`)
    .send(xml);
}
