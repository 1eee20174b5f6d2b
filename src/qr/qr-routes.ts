import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type TSchema, Type } from "typebox";
import { clientGone } from "../http/client-gone.ts";
import { action } from "../http/envelope.ts";
import { Action, responses } from "../http/openapi.ts";
import type { InvoiceQueries } from "../invoices/records/invoice-queries.ts";
import { qrImage } from "./qr-image.ts";
import type { QrService } from "./qr-service.ts";

// A data URL of a QR code is a few kilobytes; the limit leaves room for large renderings and photos.
const QrValidateBody = Type.Object({
  code: Type.String({
    minLength: 1,
    maxLength: 512 * 1024,
    description:
      "the QR text, or an image of it: data:image/png;base64,… or data:image/jpeg;base64,… (at most 4,000,000 pixels)",
  }),
});
const QrCreateBody = Type.Object({
  public_key: Type.String({
    minLength: 1,
    maxLength: 8192,
    description: "base64 of the QR public key PEM, from the crypto keys",
  }),
  certificate: Type.String({ minLength: 1, maxLength: 1024 }),
  irn: Type.String({ minLength: 1, maxLength: 100 }),
});
const IrnParams = Type.Object({ irn: Type.String({ minLength: 1, maxLength: 100 }) });

export function qrRoutes(deps: {
  qr: QrService;
  invoices: Pick<InvoiceQueries, "qrCode" | "verificationQr">;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/api/v1/einvoice/qr-code/validate",
      {
        schema: {
          summary: "Validate a QR code (its text, or a PNG or JPEG of it)",
          tags: ["irn and qr"],
          body: QrValidateBody,
          response: responses(
            Action(
              Type.Object({ irn: Type.String(), business_id: Type.String(), issued_at: Type.String() }),
              "QR Code validated successfully",
            ),
            "the code is this service's and its IRN is registered",
          ),
        },
        config: { handler: "qr.validate", failureMessage: "QR Code validation failed" },
      },
      async (request, reply) =>
        action(
          "QR Code validated successfully",
          // An image waits its turn in the caller's business's share; its client gone, it is not decoded.
          await deps.qr.validate(request.body.code, {
            business: request.principal.businessId,
            signal: clientGone(reply),
          }),
        ),
    );

    app.post(
      "/api/v1/einvoice/qr-code/create",
      {
        schema: {
          summary: "Make a QR code image from the crypto keys and an IRN",
          tags: ["irn and qr"],
          body: QrCreateBody,
          response: responses(
            Action(
              Type.Object({ qr_code: Type.String({ description: "data:image/png;base64,…" }) }),
              "QR Code generated successfully",
            ),
            "the image",
          ),
        },
        config: { handler: "qr.create", failureMessage: "QR Code generation failed" },
      },
      async (request) => {
        const text = deps.qr.create(request.body);
        return action("QR Code generated successfully", { qr_code: await qrImage.dataUrl(text) });
      },
    );

    qrImageRoutes(app, deps.invoices);
  };
}

/** Each invoice's two codes as images: the platform QR, and the verification QR (see verification/verification-service.ts). */
function qrImageRoutes(
  app: Parameters<FastifyPluginAsyncTypebox>[0],
  invoices: Pick<InvoiceQueries, "qrCode" | "verificationQr">,
): void {
  const renderings = {
    png: { type: "image/png", render: qrImage.png, verification: qrImage.verificationPng },
    svg: { type: "image/svg+xml", render: qrImage.svg, verification: qrImage.verificationSvg },
  } as const;
  for (const [format, { type, render, verification }] of Object.entries(renderings)) {
    const codes = [
      {
        path: "qr",
        summary: `The invoice's QR code as ${format.toUpperCase()}`,
        text: invoices.qrCode,
        image: render,
      },
      {
        path: "verification-qr",
        summary: `The invoice's verification QR code as ${format.toUpperCase()}: a signed token anyone verifies offline against /.well-known/jwks.json`,
        text: invoices.verificationQr,
        image: verification,
      },
    ];
    for (const code of codes) {
      app.get(
        `/api/v1/einvoice/:irn/${code.path}.${format}`,
        {
          schema: {
            summary: code.summary,
            tags: ["irn and qr"],
            params: IrnParams,
            response: {
              ...responses(Type.Object({}), "", [400, 401, 404, 429, 503]),
              // An image, not JSON: described by its content type.
              200: {
                description: `the QR code, ${type}`,
                content: { [type]: { schema: { type: "string", format: "binary" } } },
              } as unknown as TSchema,
            },
          },
          config: {
            handler: `invoice.${code.path.replace("-", "_")}_${format}`,
            failureMessage: "Failed to fetch invoice",
          },
        },
        async (request, reply) => {
          const text = await code.text(request.principal, request.params.irn);
          return reply.type(type).send(await code.image(text));
        },
      );
    }
  }
}
