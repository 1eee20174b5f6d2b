import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { DOCS } from "./auth.ts";
import { namedExamples } from "./examples.ts";

type NamedExamples = Parameters<typeof namedExamples>[0];

type OpenApiLike = {
  paths?: Record<string, Record<string, { requestBody: { content?: Record<string, unknown> } } | undefined>>;
};

const UBL_BODY = {
  type: "string",
  description:
    "A UBL 2.1 Invoice or CreditNote (Peppol BIS Billing 3.0 or EN 16931), UTF-8; read by the mapping in the UBL guide",
};

/**
 * The OpenAPI 3.1 document, built from the routes' own schemas, and Swagger UI on it at /docs.
 * Registered before any route, so that every route is in the document.
 */
export async function registerDocs(
  app: FastifyInstance,
  /** Values for the examples' placeholders in the document /docs shows (see AppDeps). */
  exampleValues?: () => Record<string, string> | undefined,
): Promise<void> {
  await app.register(swagger, {
    // Each operation is named after its handler (the name errors carry in `error.handler`).
    transform: ({ schema, url, route }) => ({
      schema: { ...schema, operationId: route.config?.handler } as typeof schema,
      url,
    }),
    // A route that also reads UBL (its schema `consumes` application/xml) takes the XML as text: the
    // JSON document's schema, which the swagger plugin gives every media type, is not the XML's.
    transformObject: (documents) => {
      const spec = (documents as { openapiObject: OpenApiLike }).openapiObject;
      for (const operations of Object.values(spec.paths ?? {})) {
        for (const operation of Object.values(operations)) {
          const content = operation?.requestBody?.content;
          if (content?.["application/xml"]) content["application/xml"] = { schema: UBL_BODY };
          for (const media of Object.values(content ?? {}) as Array<{ examples?: NamedExamples }>) {
            if (media.examples) media.examples = namedExamples(media.examples);
          }
        }
      }
      return spec;
    },
    openapi: {
      openapi: "3.1.0",
      servers: [{ url: "/", description: "the server that serves this document" }],
      info: {
        title: "E-invoicing API",
        version: "1.0.0",
        license: { name: "MIT", identifier: "MIT" },
        description:
          "Validate, sign, transmit and look up invoices for Nigeria's e-invoicing (API v1). Every request carries API-KEY and API-SECRET; errors come in one envelope whose `error.details` and `error.violations` name the field at fault.",
      },
      components: {
        securitySchemes: {
          apiKey: { type: "apiKey", in: "header", name: "API-KEY" },
          apiSecret: { type: "apiKey", in: "header", name: "API-SECRET" },
        },
      },
      security: [{ apiKey: [], apiSecret: [] }],
      tags: [
        { name: "invoices", description: "validate, sign, transmit, read and update invoices" },
        { name: "batch", description: "many invoices in one request" },
        { name: "irn and qr", description: "IRN and QR code checks, published keys" },
        { name: "reports", description: "fiscalization reports" },
        { name: "resources", description: "reference data" },
        { name: "operations", description: "health, readiness, metrics and this document" },
      ],
    },
  });

  // Interactive documentation: Swagger UI on this document, whose "Try it out" calls this server
  // with the API-KEY and API-SECRET entered under "Authorize". Its pages and assets are public.
  await app.register(swaggerUi, {
    routePrefix: DOCS,
    uiConfig: { tryItOutEnabled: true, persistAuthorization: true, docExpansion: "list" },
    transformSpecificationClone: true,
    transformSpecification: (document) => {
      const values = exampleValues?.();
      if (!values) return document;
      let text = JSON.stringify(document);
      for (const [name, value] of Object.entries(values)) text = text.replaceAll(`{{${name}}}`, value);
      return JSON.parse(text) as typeof document;
    },
  });
}
