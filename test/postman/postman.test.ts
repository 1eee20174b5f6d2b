/*
 * The Postman collection works on import: committed as `npm run postman` makes it from openapi.json,
 * and run by newman, request after request as Postman's runner would, against a fresh sandbox with
 * the environment the sandbox writes at its first start: no request answers a 5xx, and each answers
 * a status openapi.json documents for it (the collection's own test on each request).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import {
  asFile,
  COLLECTION_FILE,
  collection,
  ENVIRONMENT_FILE,
  environmentTemplate,
} from "../../scripts/postman.ts";
import { dbEnv, startServer } from "../cli/run.ts";
import { ENGINE } from "../helpers.ts";
import { readEnvironment, runCollection } from "./newman.ts";

test("the committed Postman collection and environment are npm run postman's output from openapi.json", async () => {
  assert.equal(fs.readFileSync(COLLECTION_FILE, "utf8"), asFile(await collection()));
  assert.equal(fs.readFileSync(ENVIRONMENT_FILE, "utf8"), asFile(environmentTemplate()));
});

test(`newman runs the collection against a fresh sandbox on ${ENGINE} with the environment it wrote: no 5xx, every status documented`, async (t) => {
  const db = await dbEnv(t, "einvoice.db");
  const server = await startServer(t, { ...db.env, EINVOICE_LOG_LEVEL: "warn" });
  const { environment, value } = readEnvironment(path.join(db.dir, "postman-environment.json"));
  assert.equal(value("baseUrl"), server.url, "the environment names where the sandbox answers");
  const credentials = JSON.parse(fs.readFileSync(path.join(db.dir, "sandbox-credentials.json"), "utf8"));
  assert.equal(value("api_secret"), credentials.api_secret);

  const { executions, failures, answers } = await runCollection(COLLECTION_FILE, environment);
  assert.ok(executions.length >= 40, `${executions.length} requests ran`);
  for (const execution of executions) {
    assert.equal(execution.requestError, undefined, `${execution.item.name}: ${execution.requestError}`);
    assert.ok((execution.response?.code ?? 500) < 500, `a 5xx: ${answers}`);
  }
  assert.deepEqual(
    failures.map((failure) => failure.error.message),
    [],
    answers,
  );
  // The flow went through: the sign was signed under a fresh IRN, and the lookup found it.
  const code = (name: RegExp) => executions.find((e) => name.test(e.item.name))?.response?.code;
  assert.equal(code(/^Sign an invoice, as JSON or UBL 2.1: registers it/), 200, answers);
  assert.equal(code(/^Look up an invoice's fiscalization status/), 200, answers);
});
