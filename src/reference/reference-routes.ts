import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type TSchema, Type } from "typebox";
import { reference, units } from "../http/envelope.ts";
import { ReferenceEnvelope, responses } from "../http/openapi.ts";
import { prefersXml, referenceXml } from "../http/xml.ts";
import type { ReferenceService } from "./reference-service.ts";

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

const S = Type.String();
const CodeValue = Type.Object({ code: S, value: S });
const doc = (summary: string, response: TSchema, description: string) => ({
  summary,
  tags: ["resources"],
  response: responses(response, description, [400, 401, 429]),
});
const XML_TOO = "; application/xml when the Accept header prefers it";

const config = (handler: string) => ({ handler, failureMessage: "Invalid request" });

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** The code lists: currencies, invoice types, payment means, tax categories and the like. */
function codeListRoutes(app: App, service: ReferenceService): void {
  app.get(
    `${PREFIX}/currencies`,
    {
      schema: doc(
        "Currencies",
        ReferenceEnvelope(
          Type.Object({
            symbol: S,
            name: S,
            symbol_native: S,
            name_plural: S,
            decimal_digits: Type.Integer(),
            rounding: Type.Number(),
            code: S,
          }),
        ),
        "every currency",
      ),
      config: config("resources.currencies"),
    },
    async () => reference([...service.currencies()]),
  );

  app.get(
    `${PREFIX}/invoices-types`,
    {
      schema: doc("Invoice types", ReferenceEnvelope(CodeValue), `the invoice type codes${XML_TOO}`),
      config: config("resources.invoice_types"),
    },
    async (request, reply) => {
      const data = service.invoiceTypes();
      if (prefersXml(request.headers.accept))
        return reply.type("application/xml; charset=utf-8").send(referenceXml(data));
      return reference([...data]);
    },
  );

  app.get(
    `${PREFIX}/payment-means`,
    {
      schema: doc("Payment means", ReferenceEnvelope(CodeValue), `the payment means codes${XML_TOO}`),
      config: config("resources.payment_means"),
    },
    async (request, reply) => {
      const data = service.paymentMeans();
      if (prefersXml(request.headers.accept))
        return reply.type("application/xml; charset=utf-8").send(referenceXml(data));
      return reference([...data]);
    },
  );

  app.get(
    `${PREFIX}/tax-categories`,
    {
      schema: doc(
        "Tax categories",
        ReferenceEnvelope(Type.Object({ code: S, value: S, percent: S })),
        "the tax category codes",
      ),
      config: config("resources.tax_categories"),
    },
    async () => reference([...service.taxCategories()]),
  );
}

/** The two catalogs, paged and filtered: products (HS 2022) and services (ISIC Rev.4). */
function catalogRoutes(app: App, service: ReferenceService): void {
  app.get(
    `${PREFIX}/products`,
    {
      schema: {
        ...doc(
          "Products (HS 2022), paged and filtered",
          Type.Object({
            draw: Type.Integer(),
            recordsTotal: Type.Integer(),
            recordsFiltered: Type.Integer(),
            data: Type.Array(Type.Object({ hscode: S, description: S, product_category: S })),
          }),
          "a page of products",
        ),
        querystring: ProductsQuery,
      },
      config: config("resources.products"),
    },
    async (request) => {
      const { start, length, draw, ...filter } = request.query;
      return { draw, ...(await service.products(filter, { start, length })) };
    },
  );

  app.get(
    `${PREFIX}/services`,
    {
      schema: {
        ...doc(
          "Services (ISIC Rev.4), paged and filtered",
          ReferenceEnvelope(Type.Object({ code: S, description: S }, { additionalProperties: true })),
          "a page of services",
        ),
        querystring: ServicesQuery,
      },
      config: config("resources.services"),
    },
    async (request) => {
      const { start, length, ...filter } = request.query;
      return reference(await service.services(filter, { start, length }));
    },
  );
}

export function referenceRoutes(deps: { reference: ReferenceService }): FastifyPluginAsyncTypebox {
  const { reference: service } = deps;

  return async (app) => {
    codeListRoutes(app, service);
    catalogRoutes(app, service);

    app.get(
      `${PREFIX}/lgas`,
      {
        schema: doc(
          "Local government areas",
          ReferenceEnvelope(Type.Object({ name: S, code: S, state_code: S })),
          "every LGA",
        ),
        config: config("resources.lgas"),
      },
      async () => reference([...service.lgas()]),
    );
    app.get(
      `${PREFIX}/states`,
      {
        schema: doc(
          "States",
          ReferenceEnvelope(Type.Object({ name: S, code: S })),
          "the 37 states, in order",
        ),
        config: config("resources.states"),
      },
      async () => reference([...service.states()]),
    );
    app.get(
      `${PREFIX}/units-of-measurement`,
      {
        schema: doc(
          "Units of measurement",
          Type.Object({
            status: Type.Literal(true),
            message: Type.Literal("Units fetched successfully"),
            data: Type.Array(Type.Object({ code: S, name: S })),
          }),
          "every unit",
        ),
        config: config("resources.units"),
      },
      async () => units([...service.units()]),
    );
  };
}
