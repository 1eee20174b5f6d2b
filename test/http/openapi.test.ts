import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
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
