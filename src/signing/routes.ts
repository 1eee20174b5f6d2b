import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { action } from "../http/envelope.ts";
import type { QrService } from "./qr-service.ts";

// A PNG data URL of a QR code is a few kilobytes; the limit leaves room for large renderings.
const QrValidateBody = Type.Object({
  code: Type.String({
    minLength: 1,
    maxLength: 512 * 1024,
    description: "the QR text, or a data:image/png;base64 image of it",
  }),
});

export function signingRoutes(deps: { qr: QrService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/api/v1/einvoice/qr-code/validate",
      {
        schema: { body: QrValidateBody },
        config: { handler: "qr.validate", failureMessage: "QR Code validation failed" },
      },
      async (request) => action("QR Code validated successfully", await deps.qr.validate(request.body.code)),
    );
  };
}
