import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type TSchema, Type } from "typebox";
import type { InvoicePdfs } from "../documents/pdf/service.ts";
import { InvoiceDocument } from "../documents/schema.ts";
import type { UblReader } from "../documents/ubl/ubl-in.ts";
import { action, withWarnings } from "../http/envelope.ts";
import { EXAMPLES } from "../http/examples.ts";
import { Action, Empty, errorResponses, IdenticalDocumentHeader, responses } from "../http/openapi.ts";
import { acceptXmlBodies } from "../http/xml-body.ts";
import { claimAfterCheck, IdempotencyHeaders, idempotent, ReplayedHeader } from "../idempotency/hook.ts";
import type { IdempotencyService } from "../idempotency/idempotency-service.ts";
import { pdfRoute, recordRoutes } from "./invoice-record-routes.ts";
import {
  type InvoiceApp as App,
  BatchResult,
  IrnValidateBody,
  PREFIX,
  UblQuery,
} from "./invoice-route-schemas.ts";
import { registered, ublRoutes } from "./invoice-ubl-routes.ts";
import { answerOf, signAnswer, signClaimingAfterCheck } from "./keyed-sign-routes.ts";
import type { PaymentService } from "./payments/payment-service.ts";
import type { InvoiceQueries } from "./records/invoice-queries.ts";
import { BATCH_BODY_LIMIT, BATCH_MAX_DOCUMENTS } from "./registration/batch-limits.ts";
import type { IrnCheck } from "./registration/irn-check.ts";
import type { InvoiceRegistration } from "./registration/register.ts";
import type { InvoiceTransmits } from "./transmits.ts";

const DocumentWithExamples = {
  ...InvoiceDocument,
  examples: [EXAMPLES.invoiceFull, EXAMPLES.invoiceMinimal],
};
const BatchBody = Type.Object(
  { invoices: Type.Array(Type.Unknown(), { minItems: 1, maxItems: BATCH_MAX_DOCUMENTS }) },
  { examples: [{ invoices: [EXAMPLES.invoiceFull, EXAMPLES.invoiceMinimal] }] },
);

/**
 * The invoice document is declared for documentation, but checked by the service, which reports
 * schema and rule violations together in one answer and is the only path to storage.
 */
const checkedByService = { validatorCompiler: () => () => true };
/**
 * validate, sign and sign-transmit: a JSON body reaches them unparsed (JsonText), for the
 * preparation thread to parse it once (register.ts).
 */
const invoiceFailure = (handler: string) => ({
  handler,
  failureMessage: "Failed to validate invoice",
  deferredJson: true,
});

/**
 * The answers of a route that honours Idempotency-Key: any but a refusal before the work may be a
 * replay, and a reused key (422) or one still in use (409) join them.
 */
function replayable(answers: Record<number, TSchema>): Record<number, TSchema> {
  return Object.fromEntries(
    Object.entries({ ...answers, ...errorResponses([409, 422]) }).map(([status, schema]) => [
      status,
      [401, 409, 422, 429].includes(Number(status)) ? schema : { ...schema, headers: ReplayedHeader },
    ]),
  );
}

/** A sign's 400 may carry the header that says the IRN holds this very document. */
function signAnswers(answers: Record<number, TSchema>): Record<number, TSchema> {
  const refused = answers[400] as TSchema & { headers?: Record<string, unknown> };
  return { ...answers, 400: { ...refused, headers: { ...refused.headers, ...IdenticalDocumentHeader } } };
}

/** A body of validate, sign and sign-transmit: this API's JSON document, or UBL 2.1 (ubl-in.ts). */
const DocumentBody = {
  consumes: ["application/json", "application/xml"],
  querystring: UblQuery,
  body: DocumentWithExamples,
};

/** validate, sign and sign-transmit: what registers an invoice. */
function registrationRoutes(
  app: App,
  invoices: InvoiceRegistration,
  keyed: ReturnType<typeof idempotent>,
  ubl: UblReader,
): void {
  app.post(
    `${PREFIX}/validate`,
    {
      schema: {
        summary: "Validate an invoice (every problem in one answer), as JSON or UBL 2.1",
        tags: ["invoices"],
        ...DocumentBody,
        response: responses(Action(Empty, "Invoice validated sucessfully"), "the invoice is valid"),
      },
      ...checkedByService,
      config: invoiceFailure("invoice.validate"),
    },
    async (request) => {
      const { warnings, warningsBeyond } = await registered(ubl, request, (document) =>
        invoices.validate(request.principal, document),
      );
      return withWarnings(action("Invoice validated sucessfully", []), warnings, warningsBeyond);
    },
  );

  app.post(
    `${PREFIX}/sign`,
    {
      schema: {
        summary: "Sign an invoice, as JSON or UBL 2.1: registers it under its IRN",
        tags: ["invoices"],
        headers: IdempotencyHeaders,
        ...DocumentBody,
        response: signAnswers(
          replayable(
            responses(
              Action(Empty, "Invoice signed successfully"),
              "signed and stored; a 400 `IRN already exists.` when the IRN is registered (with `Einvoice-Identical-Document` when it holds this very document)",
            ),
          ),
        ),
      },
      ...checkedByService,
      ...keyed,
      // Its Idempotency-Key claimed once the body is checked (signClaimingAfterCheck).
      config: { ...invoiceFailure("invoice.sign"), claimAfterCheck: true },
    },
    async (request, reply) => {
      const claim = claimAfterCheck(request);
      if (claim) return signClaimingAfterCheck(request, reply, invoices, claim);
      const { warnings, warningsBeyond, answered } = await registered(ubl, request, (document) =>
        // Not for UBL: its warnings are located after the sign, so its answer is stored after it.
        invoices.sign(
          request.principal,
          document,
          Buffer.isBuffer(request.body) ? undefined : answerOf(request, reply),
        ),
      );
      return signAnswer(reply, warnings, warningsBeyond, answered);
    },
  );

  app.post(
    `${PREFIX}/sign-transmit`,
    {
      schema: {
        summary: "Sign an invoice, as JSON or UBL 2.1, and transmit it to the tax authority",
        tags: ["invoices"],
        headers: IdempotencyHeaders,
        ...DocumentBody,
        response: signAnswers(
          replayable(
            responses(
              Action(Empty, "Invoice transmitted successfully!"),
              "signed and confirmed by the authority; a 503 with Retry-After when it is queued instead",
            ),
          ),
        ),
      },
      ...checkedByService,
      ...keyed,
      config: invoiceFailure("invoice.sign_transmit"),
    },
    async (request) => {
      const { warnings, warningsBeyond } = await registered(ubl, request, (document) =>
        invoices.signAndTransmit(request.principal, document),
      );
      return withWarnings(action("Invoice transmitted successfully!", []), warnings, warningsBeyond);
    },
  );
}

/** The batches of sign and sign-transmit: each document is registered as its single route would. */
function batchRoutes(app: App, invoices: InvoiceRegistration, keyed: ReturnType<typeof idempotent>): void {
  // Each document is checked by the service on its own; the schema bounds only the batch itself.
  for (const [path, transmitting] of [
    ["batch/sign", false],
    ["batch/sign-transmit", true],
  ] as const) {
    app.post(
      `${PREFIX}/${path}`,
      {
        schema: {
          summary: transmitting
            ? "Sign up to 1,000 invoices and queue each for transmission"
            : "Sign up to 1,000 invoices, each on its own",
          tags: ["batch"],
          headers: IdempotencyHeaders,
          body: BatchBody,
          response: replayable(
            responses(
              Action(Type.Array(BatchResult), "Batch processed"),
              "one result per document, in order",
              [400, 401, 413, 429, 503],
            ),
          ),
        },
        bodyLimit: BATCH_BODY_LIMIT,
        ...keyed,
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
}

export function invoiceRoutes(deps: {
  invoices: InvoiceRegistration;
  transmits: Pick<InvoiceTransmits, "transmit">;
  records: Pick<InvoiceQueries, "lookup" | "simple" | "record">;
  pdfs: Pick<InvoicePdfs, "pdf">;
  irns: IrnCheck;
  payments: PaymentService;
  idempotency: Pick<IdempotencyService, "begin" | "complete" | "release" | "answeredWith" | "claimWith">;
  ubl: UblReader;
}): FastifyPluginAsyncTypebox {
  // Signing routes opt in: a retry of a sign whose answer was lost answers what the first did.
  const keyed = idempotent(deps.idempotency);
  return async (app) => {
    acceptXmlBodies(app);
    registrationRoutes(app, deps.invoices, keyed, deps.ubl);
    ublRoutes(app, deps.ubl, deps.records);
    batchRoutes(app, deps.invoices, keyed);
    recordRoutes(app, deps);
    pdfRoute(app, deps.pdfs);

    app.post(
      `${PREFIX}/irn/validate`,
      {
        schema: {
          summary: "Check that an IRN fits the business's template and is not registered",
          tags: ["irn and qr"],
          body: IrnValidateBody,
          response: responses(
            Type.Object({ code: Type.Literal(200), data: Type.Object({ ok: Type.Literal(true) }) }),
            "the IRN can be used",
          ),
        },
        config: { handler: "irn.validate", failureMessage: "error has occurred" },
      },
      async (request) => ({
        code: 200 as const,
        data: await deps.irns.validateIrn(request.principal, request.body),
      }),
    );
  };
}
