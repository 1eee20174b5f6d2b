import { once } from "node:events";
import http from "node:http";
import type { TestContext } from "node:test";

/** What the proxy does with one request: fail it, hold it, forward it (after a pause), or forward it and drop the answer. */
export type Fate =
  | { kind: "error" }
  | { kind: "hold" }
  | { kind: "pass"; delayMs?: number }
  | { kind: "drop" };

/**
 * A proxy in front of an authority instance that decides each request's fate, and counts, per IRN,
 * how many sign-transmits the authority accepted (200): more than one would be a double delivery.
 */
export async function proxy(t: TestContext, port: number, target: number, decide: () => Fate) {
  const accepted = new Map<string, number>();
  const stats = { errors: 0, held: 0, dropped: 0, passed: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const fate = decide();
      if (fate.kind === "error") {
        stats.errors += 1;
        res.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad gateway</h1>");
        return;
      }
      if (fate.kind === "hold") {
        stats.held += 1;
        setTimeout(() => res.destroy(), 2000);
        return;
      }
      setTimeout(
        () => {
          const upstream = http.request(
            { host: "127.0.0.1", port: target, path: req.url, method: req.method, headers: req.headers },
            (up) => {
              const parts: Buffer[] = [];
              up.on("data", (c: Buffer) => parts.push(c));
              up.on("end", () => {
                // A replay (the answer of an earlier attempt with the same Idempotency-Key) accepts nothing.
                if (
                  req.method === "POST" &&
                  req.url?.endsWith("/sign-transmit") &&
                  up.statusCode === 200 &&
                  up.headers["idempotent-replayed"] !== "true"
                ) {
                  const irn = String(req.headers["idempotency-key"]);
                  accepted.set(irn, (accepted.get(irn) ?? 0) + 1);
                }
                if (fate.kind === "drop" || res.destroyed) {
                  stats.dropped += 1;
                  res.destroy();
                  return;
                }
                stats.passed += 1;
                res.writeHead(up.statusCode ?? 502, up.headers).end(Buffer.concat(parts));
              });
            },
          );
          upstream.on("error", () => res.destroy());
          upstream.end(Buffer.concat(chunks));
        },
        fate.kind === "pass" ? (fate.delayMs ?? 0) : 0,
      );
    });
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { accepted, stats };
}

/** 30% of requests fail: 10% answered 502, 10% held until the caller gives up, 10% dropped after the authority accepted. */
export function faulty(seed = 42): () => Fate {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    const roll = state / 2147483648;
    return roll < 0.1
      ? { kind: "error" }
      : roll < 0.2
        ? { kind: "hold" }
        : roll < 0.3
          ? { kind: "drop" }
          : { kind: "pass" };
  };
}

/** Every request forwarded after a pause, so deliveries are in flight for a while. */
export const slow = (delayMs: number) => (): Fate => ({ kind: "pass", delayMs });
