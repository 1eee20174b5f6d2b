import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { action, withWarnings } from "../http/envelope.ts";
import { BATCH_BODY_LIMIT, BATCH_MAX_DOCUMENTS } from "../http/limits.ts";
import { PAYMENT_STATUSES } from "../reference/data.ts";
import { InvoiceDocument } from "./schema.ts";
import type { InvoiceService } from "./service.ts";

const PREFIX = "/api/v1/einvoice";
const IrnParams = Type.Object({ irn: Type.String({ minLength: 1, maxLength: 100 }) });
const UpdateBody = Type.Object({
  payment_status: Type.Union(PAYMENT_STATUSES.map((s) => Type.Literal(s))),
  reference: Type.Optional(Type.String({ maxLength: 500 })),
});
const BatchBody = Type.Object({
  invoices: Type.Array(Type.Unknown(), { minItems: 1, maxItems: BATCH_MAX_DOCUMENTS }),
});
const IrnValidateBody = Type.Object({
  irn: Type.String({ minLength: 1, maxLength: 100 }),
  business_id: Type.String({ minLength: 1, maxLength: 100 }),
});

/**
 * The invoice document is declared for documentation, but checked by the service, which reports
 * schema and rule violations together in one answer and is the only path to storage.
 */
const checkedByService = { validatorCompiler: () => () => true };
const invoiceFailure = (handler: string) => ({ handler, failureMessage: "Failed to validate invoice" });

export function invoiceRoutes(deps: { invoices: InvoiceService }): FastifyPluginAsyncTypebox {
  const { invoices } = deps;
  return async (app) => {
    app.post(
      `${PREFIX}/validate`,
      { schema: { body: InvoiceDocument }, ...checkedByService, config: invoiceFailure("invoice.validate") },
      async (request) => {
        const { warnings } = await invoices.validate(request.principal, request.body);
        return withWarnings(action("Invoice validated sucessfully", []), warnings);
      },
    );

    app.post(
      `${PREFIX}/sign`,
      { schema: { body: InvoiceDocument }, ...checkedByService, config: invoiceFailure("invoice.sign") },
      async (request) => {
        const { warnings } = await invoices.sign(request.principal, request.body);
        return withWarnings(action("Invoice signed successfully", []), warnings);
      },
    );

    app.post(
      `${PREFIX}/sign-transmit`,
      {
        schema: { body: InvoiceDocument },
        ...checkedByService,
        config: invoiceFailure("invoice.sign_transmit"),
      },
      async (request) => {
        const { warnings } = await invoices.signAndTransmit(request.principal, request.body);
        return withWarnings(action("Invoice transmitted successfully!", []), warnings);
      },
    );

    // Each document is checked by the service on its own; the schema bounds only the batch itself.
    for (const [path, transmitting] of [
      ["batch/sign", false],
      ["batch/sign-transmit", true],
    ] as const) {
      app.post(
        `${PREFIX}/${path}`,
        {
          schema: { body: BatchBody },
          bodyLimit: BATCH_BODY_LIMIT,
          config: {
            handler: `invoice.${path.replace("/", "_")}`,
            failureMessage: "Failed to validate batch",
          },
        },
        async (request) =>
          action(
            "Batch processed",
            await invoices.signMany(request.principal, request.body.invoices, transmitting),
          ),
      );
    }

    app.get(
      `${PREFIX}/transmit/:irn`,
      {
        schema: { params: IrnParams },
        config: { handler: "invoice.transmit", failureMessage: "Failed to transmit invoice" },
      },
      async (request) => {
        await invoices.transmit(request.principal, request.params.irn);
        return action("Invoice transmitted successfully", []);
      },
    );

    app.get(
      `${PREFIX}/lookup/:irn`,
      {
        schema: { params: IrnParams },
        config: { handler: "invoice.lookup", failureMessage: "Failed to look up invoice" },
      },
      async (request) =>
        action("Lookup completed", await invoices.lookup(request.principal, request.params.irn)),
    );

    app.get(
      `${PREFIX}/:irn/simple`,
      {
        schema: { params: IrnParams },
        config: { handler: "invoice.simple", failureMessage: "Failed to fetch invoice" },
      },
      async (request) =>
        action("Invoice fetched successfully", await invoices.simple(request.principal, request.params.irn)),
    );

    app.get(
      `${PREFIX}/:irn`,
      {
        schema: { params: IrnParams },
        config: { handler: "invoice.fetch", failureMessage: "Failed to fetch invoice" },
      },
      async (request) =>
        action("Invoice fetched successfully", await invoices.record(request.principal, request.params.irn)),
    );

    app.patch(
      `${PREFIX}/update/:irn`,
      {
        schema: { params: IrnParams, body: UpdateBody },
        config: { handler: "invoice.update", failureMessage: "Failed to update invoice" },
      },
      async (request) => {
        await invoices.updatePayment(request.principal, request.params.irn, request.body);
        return action("Invoice updated successfully", []);
      },
    );

    app.post(
      `${PREFIX}/irn/validate`,
      {
        schema: { body: IrnValidateBody },
        config: { handler: "irn.validate", failureMessage: "error has occurred" },
      },
      async (request) => ({
        code: 200 as const,
        data: await invoices.validateIrn(request.principal, request.body),
      }),
    );
  };
}
