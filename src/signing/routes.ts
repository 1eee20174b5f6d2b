import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import QRCode from "qrcode";
import { Type } from "typebox";
import { action } from "../http/envelope.ts";
import type { InvoiceService } from "../invoices/service.ts";
import type { QrService } from "./qr-service.ts";
import type { Signer } from "./signer.ts";

// A PNG data URL of a QR code is a few kilobytes; the limit leaves room for large renderings.
const QrValidateBody = Type.Object({
  code: Type.String({
    minLength: 1,
    maxLength: 512 * 1024,
    description: "the QR text, or a data:image/png;base64 image of it",
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

/** Error correction H survives a smudged print; 300 px is legible from a receipt. */
const RENDER = { errorCorrectionLevel: "H", margin: 2, width: 320 } as const;

export function signingRoutes(deps: {
  qr: QrService;
  signer: Pick<Signer, "jwks">;
  invoices: Pick<InvoiceService, "qrCode">;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/.well-known/jwks.json",
      { config: { handler: "jwks", public: true } },
      async (_request, reply) => {
        void reply.header("cache-control", "public, max-age=300");
        return deps.signer.jwks();
      },
    );

    app.post(
      "/api/v1/einvoice/qr-code/validate",
      {
        schema: { body: QrValidateBody },
        config: { handler: "qr.validate", failureMessage: "QR Code validation failed" },
      },
      async (request) => action("QR Code validated successfully", await deps.qr.validate(request.body.code)),
    );

    app.post(
      "/api/v1/einvoice/qr-code/create",
      {
        schema: { body: QrCreateBody },
        config: { handler: "qr.create", failureMessage: "QR Code generation failed" },
      },
      async (request) => {
        const text = deps.qr.create(request.body);
        return action("QR Code generated successfully", { qr_code: await QRCode.toDataURL(text, RENDER) });
      },
    );

    const renderings = {
      png: { type: "image/png", render: (text: string) => QRCode.toBuffer(text, { ...RENDER, type: "png" }) },
      svg: {
        type: "image/svg+xml",
        render: (text: string) => QRCode.toString(text, { ...RENDER, type: "svg" }),
      },
    } as const;
    for (const [format, { type, render }] of Object.entries(renderings)) {
      app.get(
        `/api/v1/einvoice/:irn/qr.${format}`,
        {
          schema: { params: IrnParams },
          config: { handler: `invoice.qr_${format}`, failureMessage: "Failed to fetch invoice" },
        },
        async (request, reply) => {
          const text = await deps.invoices.qrCode(request.principal, request.params.irn);
          return reply.type(type).send(await render(text));
        },
      );
    }
  };
}
