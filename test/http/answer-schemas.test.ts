import assert from "node:assert/strict";
import { test } from "node:test";
import type { FastifyPluginAsync } from "fastify";
import pino from "pino";
import { Type } from "typebox";
import { loadConfig } from "../../src/config.ts";
import { buildApp } from "../../src/http/app.ts";

// A route that answers something other than what it documents, as a change to a service could.
const drifting: FastifyPluginAsync = async (app) => {
  app.get(
    "/drift",
    {
      schema: {
        response: { 200: Type.Object({ code: Type.Literal(200), data: Type.Object({ n: Type.Integer() }) }) },
      },
      config: { public: true, handler: "drift" },
    },
    async (request) => ({ code: 200, data: { n: (request.query as { as?: string }).as ?? 1 } }),
  );
};

async function appWith(checkAnswers: boolean) {
  const config = loadConfig({});
  const logged: string[] = [];
  const logger = pino({ level: "error" }, { write: (line: string) => logged.push(line) });
  const app = await buildApp({
    logger,
    authenticate: async () => null,
    routes: [drifting],
    rateLimits: config.rateLimits,
    requestTimeoutMs: 5000,
    ready: async () => {},
    checkAnswers,
  });
  return { app, logged };
}

test("outside production an answer that does not match its route's response schema is a logged 500", async (t) => {
  const { app, logged } = await appWith(true);
  t.after(() => app.close());
  const fine = await app.inject({ url: "/drift" });
  assert.equal(fine.statusCode, 200);
  assert.deepEqual(fine.json(), { code: 200, data: { n: 1 } });

  const drifted = await app.inject({ url: "/drift?as=one" });
  assert.equal(drifted.statusCode, 500);
  assert.equal(drifted.json().code, 500);
  assert.ok(
    logged.some((line) => line.includes("does not match its response schema") && line.includes("/drift")),
    "the drift is logged with the route",
  );
});

test("in production answers are sent as built, unchecked and unchanged", async (t) => {
  const { app } = await appWith(false);
  t.after(() => app.close());
  const drifted = await app.inject({ url: "/drift?as=one" });
  assert.equal(drifted.statusCode, 200);
  assert.deepEqual(drifted.json(), { code: 200, data: { n: "one" } }, "no field dropped or coerced");
});
