import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { securityHeaders } from "../html/headers.ts";
import { STYLE } from "../html/style.ts";
import { VERIFY_STYLE, VERIFY_STYLE_EXTRA, verificationPage } from "./verification-page.ts";
import type { VerificationService } from "./verification-service.ts";

/** Any text is taken and judged by the page (a token too long is "not a token"): no input is a 400 or a 5xx. */
const Query = Type.Object({ t: Type.Optional(Type.String()) });

/**
 * The public verification page: what a verification QR's token says and whether its signature
 * holds, for anyone, without credentials. Server-rendered HTML under the dashboard's style and CSP.
 */
export function verifyRoutes(deps: {
  verification: Pick<VerificationService, "verify">;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook("onSend", securityHeaders);
    app.get(
      "/verify",
      { schema: { hide: true, querystring: Query }, config: { handler: "verify", public: true } },
      async (request, reply) => {
        const text = request.query.t;
        const result =
          text === undefined || text.trim() === "" ? undefined : await deps.verification.verify(text);
        const page = verificationPage(result === undefined ? undefined : text, result);
        return reply.type("text/html; charset=utf-8").send(page.text);
      },
    );
    app.get(
      VERIFY_STYLE,
      { schema: { hide: true }, config: { handler: "verify.style", public: true } },
      async (_request, reply) =>
        reply
          .type("text/css; charset=utf-8")
          .header("cache-control", "max-age=300")
          .send(STYLE + VERIFY_STYLE_EXTRA),
    );
  };
}
