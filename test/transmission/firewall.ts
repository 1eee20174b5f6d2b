import http from "node:http";
import type { AddressInfo } from "node:net";
import type { TestContext } from "node:test";

/** One request as the firewall saw it, and what became of it. */
export type Seen = { method: string; path: string; status: number; blocked: boolean };

/** A request the firewall judges: its method, path and query, and its whole body as text. */
export type Inspected = { method: string; path: string; body: string };

/** The page a blocking rule answers with, as web application firewalls do: HTML of their own. */
export const BLOCKED_PAGE =
  "<html><head><title>403 Forbidden</title></head><body><h1>Request blocked</h1><p>The web application firewall refused this request (rule 941100: cross-site scripting).</p></body></html>";

/**
 * A real web application firewall in front of an upstream (the MBS simulator): it reads each
 * request whole, answers 403 with its own page (`BLOCKED_PAGE`, or `bare`: a one-word body) to what
 * `blocks` matches, and forwards the rest. `replaceSecret` sets a secret sent instead of the
 * caller's: the upstream then refuses the credential itself, as it does a revoked one. Every
 * request is kept in `seen`, in the order the answers were sent.
 */
export async function firewall(
  t: TestContext,
  target: string,
  options: {
    blocks?: (request: Inspected) => boolean;
    bare?: boolean;
    /** The header `replaceSecret` replaces: MBS's by default, `api-secret` for this API. */
    secretHeader?: string;
  } = {},
) {
  const secretHeader = options.secretHeader ?? "x-api-secret";
  const to = new URL(target);
  const seen: Seen[] = [];
  const state: { blocks: (request: Inspected) => boolean; secret?: string } = {
    blocks: options.blocks ?? (() => false),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const method = req.method ?? "GET";
      const path = req.url ?? "/";
      const body = Buffer.concat(chunks);
      if (state.blocks({ method, path, body: body.toString("utf8") })) {
        seen.push({ method, path, status: 403, blocked: true });
        const type = options.bare ? "text/plain" : "text/html";
        res.writeHead(403, { "content-type": type }).end(options.bare ? "Forbidden" : BLOCKED_PAGE);
        return;
      }
      const headers: http.OutgoingHttpHeaders = { ...req.headers, host: to.host };
      if (state.secret !== undefined) headers[secretHeader] = state.secret;
      const upstream = http.request({ host: to.hostname, port: to.port, path, method, headers }, (answer) => {
        const parts: Buffer[] = [];
        answer.on("data", (part: Buffer) => parts.push(part));
        answer.on("end", () => {
          seen.push({ method, path, status: answer.statusCode ?? 502, blocked: false });
          res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(parts));
        });
      });
      upstream.on("error", () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    /** Changes the rule: from now on `blocks` decides. */
    block(blocks: (request: Inspected) => boolean) {
      state.blocks = blocks;
    },
    /** Sends this secret instead of the caller's (undefined: the caller's again). */
    replaceSecret(secret: string | undefined) {
      state.secret = secret;
    },
  };
}
