import type { FastifyReply } from "fastify";

/**
 * Fires when the client's connection closes before its answer was sent (the client gave up, or its
 * connection was cut): work queued for the request is then dropped before it runs. The response's
 * `close` comes with the connection's, or after the answer is written, when it means nothing.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const res = reply.raw;
  if (res.destroyed) {
    controller.abort();
    return controller.signal;
  }
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
