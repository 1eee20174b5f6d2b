import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { reference, units } from "../http/envelope.ts";
import { prefersXml, referenceXml } from "../http/xml.ts";
import type { ReferenceService } from "./service.ts";

const PREFIX = "/api/v1/einvoice/resources";

const Paging = {
  // Far past the largest catalog, well inside every engine's integer range.
  start: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0, description: "pagination offset" }),
  length: Type.Integer({ minimum: 1, maximum: 1000, default: 10, description: "page size, at most 1000" }),
  description: Type.Optional(Type.String({ maxLength: 200 })),
  search: Type.Optional(
    Type.String({ maxLength: 200, description: "free text: code prefix or words of the description" }),
  ),
};

const ProductsQuery = Type.Object({
  ...Paging,
  draw: Type.Integer({ minimum: 0, default: 1 }),
  hscode: Type.Optional(Type.String({ maxLength: 20 })),
  product_category: Type.Optional(Type.String({ maxLength: 200 })),
});

const ServicesQuery = Type.Object({ ...Paging, code: Type.Optional(Type.String({ maxLength: 20 })) });

export function referenceRoutes(deps: { reference: ReferenceService }): FastifyPluginAsyncTypebox {
  const { reference: service } = deps;
  const config = (handler: string) => ({ handler, failureMessage: "Invalid request" });

  return async (app) => {
    app.get(`${PREFIX}/currencies`, { config: config("resources.currencies") }, async () =>
      reference([...service.currencies()]),
    );

    app.get(
      `${PREFIX}/invoices-types`,
      { config: config("resources.invoice_types") },
      async (request, reply) => {
        const data = service.invoiceTypes();
        if (prefersXml(request.headers.accept))
          return reply.type("application/xml; charset=utf-8").send(referenceXml(data));
        return reference([...data]);
      },
    );

    app.get(
      `${PREFIX}/payment-means`,
      { config: config("resources.payment_means") },
      async (request, reply) => {
        const data = service.paymentMeans();
        if (prefersXml(request.headers.accept))
          return reply.type("application/xml; charset=utf-8").send(referenceXml(data));
        return reference([...data]);
      },
    );

    app.get(`${PREFIX}/tax-categories`, { config: config("resources.tax_categories") }, async () =>
      reference([...service.taxCategories()]),
    );

    app.get(
      `${PREFIX}/products`,
      { schema: { querystring: ProductsQuery }, config: config("resources.products") },
      async (request) => {
        const { start, length, draw, ...filter } = request.query;
        return { draw, ...(await service.products(filter, { start, length })) };
      },
    );

    app.get(
      `${PREFIX}/services`,
      { schema: { querystring: ServicesQuery }, config: config("resources.services") },
      async (request) => {
        const { start, length, ...filter } = request.query;
        return reference(await service.services(filter, { start, length }));
      },
    );

    app.get(`${PREFIX}/lgas`, { config: config("resources.lgas") }, async () =>
      reference([...service.lgas()]),
    );
    app.get(`${PREFIX}/states`, { config: config("resources.states") }, async () =>
      reference([...service.states()]),
    );
    app.get(`${PREFIX}/units-of-measurement`, { config: config("resources.units") }, async () =>
      units([...service.units()]),
    );
  };
}
