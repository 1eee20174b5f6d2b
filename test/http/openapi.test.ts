import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { build, REPO_ROOT } from "../helpers.ts";

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
