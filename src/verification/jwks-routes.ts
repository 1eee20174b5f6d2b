import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { Signer } from "../crypto/signer.ts";
import { responses } from "../http/openapi.ts";

/** The JWK Set that verifies invoice signatures and verification tokens: public, cacheable. */
export function jwksRoutes(deps: { signer: Pick<Signer, "jwks"> }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/.well-known/jwks.json",
      {
        schema: {
          summary: "The public keys that verify invoice signatures (JWK Set, no credentials)",
          tags: ["irn and qr"],
          security: [],
          response: responses(
            Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }),
            "the JWK Set",
            [429],
          ),
        },
        config: { handler: "jwks", public: true },
      },
      async (_request, reply) => {
        void reply.header("cache-control", "public, max-age=300");
        return deps.signer.jwks();
      },
    );
  };
}
