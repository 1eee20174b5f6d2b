import type { IncomingMessage } from "node:http";
import net from "node:net";
import type { FastifyInstance } from "fastify";

/*
 * An answer given before the request's body was read (a 413 on the declared length, a 401 or 429
 * from the hooks that run before any body is read) ends its connection, and Node closes the socket
 * as soon as the answer is written. The client's bytes still unread in the kernel's receive buffer
 * then make the kernel reset the connection, and the reset throws away the answer the client has
 * not read yet: a client that writes its whole body before reading (many do) sees ECONNRESET or
 * EPIPE instead of its 413. Such a connection is closed here as nginx's lingering close does: the
 * answer, then a half-close (FIN), then the client's bytes read and dropped until it closes its
 * side, within the bounds below, then the socket closed.
 */

/**
 * At most this long from the answer to the close, whatever the client does: a client that trickles
 * bytes (a slowloris) holds a socket no longer. nginx allows 30 s (lingering_time) for browsers on
 * any link; the clients of this API are servers, on links that carry a 1 MiB body in well under a
 * second, and a socket held for nothing costs a file descriptor and a little memory.
 */
export const LINGER_MS = 5000;

/**
 * Closed sooner when nothing arrives for this long (nginx's lingering_timeout is 5 s): a client
 * still sending its body sends it without pauses of seconds; one silent this long has sent all it
 * meant to, or stalled.
 */
export const LINGER_IDLE_MS = 2000;

/**
 * At most this many bytes dropped after the answer, or the route's own body limit when larger (a
 * batch: 32 MiB): a client that sent a body several times its limit, the common mistake, still
 * reads its 413, and dropping what a route would accept costs less than reading and parsing it.
 * Past it the connection is closed: a client that reads as it writes (curl) has its answer by
 * then, and one that writes more than this before reading anything is cut off.
 */
export const LINGER_BYTES = 8 * 1024 * 1024;

/**
 * Installs the lingering close on `app`'s answers given before their request's body was read. A
 * request whose body was read whole keeps its connection alive as before. Once the app is closing,
 * lingering connections are closed at once, so they never hold a shutdown.
 */
export function lingeringClose(app: FastifyInstance): void {
  /** Connections whose last answer went before their request's body was read. */
  const answered = new WeakSet<net.Socket>();
  /** Those of them lingering now. */
  const lingering = new Set<net.Socket>();
  let closing = false;

  /**
   * Reads the rest of `req`'s body from now on, and returns what, once the answer is written,
   * half-closes `socket` and goes on dropping the body within the bounds. Left to itself, Node
   * drops the body of a request answered before it was read inside its parser, where the bytes
   * cannot be counted; a listener on the request's data, added before the answer ends, gets them.
   */
  function lingerAfterAnswer(socket: net.Socket, req: IncomingMessage, maxBytes: number): () => void {
    /** Once the answer is written: the bytes dropped since, and the timer of silence. */
    let lingered: { dropped: number; idle: NodeJS.Timeout } | undefined;
    const close = () => socket.destroy();
    req.on("data", (chunk: Buffer) => {
      if (!lingered) return;
      lingered.dropped += chunk.length;
      if (lingered.dropped > maxBytes) close();
      else lingered.idle.refresh();
    });
    return () => {
      // The whole body is in: nothing is left unread, so Node's own close sends no reset.
      if (req.readableEnded) return net.Socket.prototype.destroySoon.call(socket);
      const deadline = setTimeout(close, LINGER_MS).unref();
      const idle = setTimeout(close, LINGER_IDLE_MS).unref();
      lingered = { dropped: 0, idle };
      lingering.add(socket);
      socket.once("close", () => {
        clearTimeout(deadline);
        clearTimeout(idle);
        lingering.delete(socket);
      });
      // The rest of the body has arrived, or the client has closed its side: nothing is left
      // unread, and the close sends no reset.
      req.once("end", close);
      socket.once("end", close);
      socket.end();
    };
  }

  // Callbacks, not promises: these run on every request (see app.ts).
  app.addHook("onRequest", (request, reply, done) => {
    // A request pipelined after a body whose answer is already sent, on a connection being closed:
    // it could not be answered, so it does not run.
    if (answered.has(request.raw.socket)) reply.hijack();
    done();
  });

  app.addHook("onSend", (request, reply, payload, done) => {
    const req = request.raw;
    const socket = req.socket;
    // `inject` has no socket; a body read whole leaves nothing behind and keeps its connection.
    if (req.complete || !(socket instanceof net.Socket)) {
      done(null, payload);
      return;
    }
    void reply.header("connection", "close");
    answered.add(socket);
    const linger = lingerAfterAnswer(
      socket,
      req,
      Math.max(LINGER_BYTES, request.routeOptions.bodyLimit ?? 0),
    );
    // Node ends the connection of a last answer with destroySoon (end, then destroy once written).
    socket.destroySoon = () => {
      if (closing) net.Socket.prototype.destroySoon.call(socket);
      else linger();
    };
    done(null, payload);
  });

  app.addHook("preClose", async () => {
    closing = true;
    for (const socket of lingering) socket.destroy();
  });
}
