import type { FastifyReply, FastifyRequest } from "fastify";

/** The headers every HTML page of the service carries: its own styles and images only, never framed. */
export async function securityHeaders(_request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  reply.header(
    "content-security-policy",
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  reply.header("x-content-type-options", "nosniff");
  reply.header("referrer-policy", "same-origin");
  if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
  return payload;
}
