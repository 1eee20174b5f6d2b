import type { IncomingMessage } from "node:http";
import type { FastifyInstance } from "fastify";
import { payloadTooLarge } from "./error-mapper.ts";
import { BODY_LIMIT } from "./limits.ts";

/*
 * `Expect: 100-continue`: the client sends its head, and its body only once told `100 Continue`.
 * Node says it on its own as soon as the head arrives, before anything is known of the request, so a
 * body that will be refused is sent all the same. Here it is said once the request has passed the
 * hooks that run before its body is read (credentials, rate limits) and its declared length is within
 * its route's limit (the batches take 32 MiB); otherwise the final answer (401, 429, 413 in the
 * envelope) is the only one, and the body is never sent.
 */
export function expectContinue(app: FastifyInstance): void {
  const waiting = new WeakSet<IncomingMessage>();
  // With a listener for this event, Node leaves the 100 Continue to it.
  app.server.on("checkContinue", (req: IncomingMessage, res) => {
    waiting.add(req);
    app.server.emit("request", req, res);
  });
  // preParsing: after the onRequest hooks, before the body is read.
  // A callback, not a promise: it runs on every request with a body (see app.ts).
  app.addHook("preParsing", (request, reply, payload, done) => {
    if (!waiting.has(request.raw)) {
      done(null, payload);
      return;
    }
    waiting.delete(request.raw);
    const limit = request.routeOptions.bodyLimit ?? BODY_LIMIT;
    if (Number(request.headers["content-length"]) > limit) {
      done(payloadTooLarge(limit));
      return;
    }
    reply.raw.writeContinue();
    done(null, payload);
  });
}
