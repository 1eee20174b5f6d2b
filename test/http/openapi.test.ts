import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { seedSandbox } from "../../src/main.ts";
import { build, REPO_ROOT, SHARED_DIR } from "../helpers.ts";

type Operation = {
  summary?: string;
  operationId?: string;
  tags?: string[];
  security?: unknown[];
  responses?: Record<string, unknown>;
};

test("/openapi.json is public, OpenAPI 3.1, and the committed openapi.json is exactly it (run `npm run openapi`)", async (t) => {
  const { app } = await build(t);
  const res = await app.inject({ url: "/openapi.json" });
  assert.equal(res.statusCode, 200);
  const served = res.json() as { openapi: string; paths: Record<string, Record<string, Operation>> };
  assert.equal(served.openapi, "3.1.0");
  const committed = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "openapi.json"), "utf8")) as unknown;
  assert.deepEqual(
    served,
    committed,
    "openapi.json is behind the routes: run `npm run openapi` and commit it",
  );

  // Every route of the app is described: a summary, a unique operation id, a success and its failures.
  const ids = new Set<string>();
  const publicPaths = new Set(["/healthz", "/readyz", "/openapi.json", "/metrics", "/.well-known/jwks.json"]);
  for (const [route, operations] of Object.entries(served.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const at = `${method.toUpperCase()} ${route}`;
      assert.ok(operation.summary, `${at} has a summary`);
      assert.ok(operation.operationId && !ids.has(operation.operationId), `${at} has its own operationId`);
      ids.add(operation.operationId as string);
      assert.ok(operation.responses?.["200"], `${at} documents its success`);
      assert.ok(
        Object.keys(operation.responses ?? {}).some((status) => status.startsWith("4")),
        `${at} documents a failure`,
      );
      if (publicPaths.has(route)) assert.deepEqual(operation.security, [], `${at} needs no credentials`);
      else assert.ok(operation.responses?.["401"], `${at} documents its 401`);
    }
  }
  for (const route of [
    "/api/v1/einvoice/sign",
    "/api/v1/einvoice/batch/sign",
    "/api/v1/einvoice/lookup/{irn}",
  ]) {
    assert.ok(served.paths[route], `${route} is described`);
  }
});

test("the document's examples are the shared fixtures, placeholders and all", async (t) => {
  for (const name of ["invoice-full", "invoice-minimal", "report-fiscalization"]) {
    assert.equal(
      fs.readFileSync(path.join(REPO_ROOT, "src", "http", "examples", `${name}.json`), "utf8"),
      fs.readFileSync(path.join(SHARED_DIR, "fixtures", `${name}.json`), "utf8"),
      `${name}.json`,
    );
  }
  const { app } = await build(t);
  const served = (await app.inject({ url: "/openapi.json" })).json();
  // A route's examples, as @fastify/swagger places them: a named map, or one `example`.
  const examplesOf = (route: string): unknown[] => {
    const media = served.paths[route].post.requestBody.content["application/json"];
    return media.examples
      ? Object.values(media.examples as Record<string, { value: unknown }>).map((e) => e.value)
      : [media.example];
  };
  const full = JSON.parse(fs.readFileSync(path.join(SHARED_DIR, "fixtures", "invoice-full.json"), "utf8"));
  for (const route of [
    "/api/v1/einvoice/validate",
    "/api/v1/einvoice/sign",
    "/api/v1/einvoice/sign-transmit",
  ]) {
    assert.deepEqual(examplesOf(route)[0], full, route);
  }
  const [report] = examplesOf("/api/v1/einvoice/report-fiscalization") as Array<{ vat_status: string }>;
  assert.equal(report?.vat_status, "STANDARD_VAT");
});

test("in the sandbox, /docs shows the examples with the demo business's ids, and they sign as they stand", async (t) => {
  const { app, ctx } = await build(t);
  const seeded = await seedSandbox(ctx);
  const demo = seeded.credentials as NonNullable<typeof seeded.credentials>;
  const shown = (await app.inject({ url: "/docs/json" })).json();
  const media = shown.paths["/api/v1/einvoice/sign"].post.requestBody.content["application/json"];
  const example = (Object.values(media.examples) as Array<{ value: Record<string, unknown> }>)[0]?.value;
  assert.equal(example?.business_id, demo.business_id);
  assert.equal(example?.irn, `INV0001-${demo.service_id}-20261115`);
  assert.ok(!JSON.stringify(shown).includes("{{"), "no placeholder is left");
  assert.ok(!JSON.stringify(shown).includes(demo.api_secret), "the secret is never in the document");
  const signed = await app.inject({
    method: "POST",
    url: "/api/v1/einvoice/sign",
    headers: { "api-key": demo.api_key, "api-secret": demo.api_secret },
    payload: example,
  });
  assert.equal(signed.statusCode, 200, signed.body);
  // The published document keeps the placeholders.
  assert.ok((await app.inject({ url: "/openapi.json" })).body.includes("{{BUSINESS_ID}}"));
});
