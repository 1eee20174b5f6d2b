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
import newman from "newman";
import {
  asFile,
  COLLECTION_FILE,
  collection,
  ENVIRONMENT_FILE,
  environmentTemplate,
} from "../../scripts/postman.ts";
import { dbEnv, startServer } from "../cli/run.ts";
import { ENGINE } from "../helpers.ts";

test("the committed Postman collection and environment are npm run postman's output from openapi.json", async () => {
  assert.equal(fs.readFileSync(COLLECTION_FILE, "utf8"), asFile(await collection()));
  assert.equal(fs.readFileSync(ENVIRONMENT_FILE, "utf8"), asFile(environmentTemplate()));
});

type Execution = {
  item: { name: string };
  request: { method: string; url: { toString(): string } };
  response?: { code: number };
  assertions?: Array<{ assertion: string; error?: { message: string } }>;
  requestError?: Error;
};
type Summary = { run: { executions: Execution[]; failures: Array<{ error: { message: string } }> } };

test(`newman runs the collection against a fresh sandbox on ${ENGINE} with the environment it wrote: no 5xx, every status documented`, async (t) => {
  const db = await dbEnv(t, "einvoice.db");
  const server = await startServer(t, { ...db.env, EINVOICE_LOG_LEVEL: "warn" });
  const environment = JSON.parse(fs.readFileSync(path.join(db.dir, "postman-environment.json"), "utf8")) as {
    values: Array<{ key: string; value: string }>;
  };
  const value = (key: string) => environment.values.find((v) => v.key === key)?.value;
  assert.equal(value("baseUrl"), server.url, "the environment names where the sandbox answers");
  const credentials = JSON.parse(fs.readFileSync(path.join(db.dir, "sandbox-credentials.json"), "utf8"));
  assert.equal(value("api_secret"), credentials.api_secret);

  const summary = await new Promise<Summary>((resolve, reject) => {
    newman.run(
      {
        collection: JSON.parse(fs.readFileSync(COLLECTION_FILE, "utf8")),
        environment,
        reporters: [],
        timeoutRequest: 30_000,
      },
      (err: Error | null, result: Summary) => (err ? reject(err) : resolve(result)),
    );
  });
  const executions = summary.run.executions;
  assert.ok(executions.length >= 40, `${executions.length} requests ran`);
  const answers = executions.map((e) => `${e.response?.code ?? e.requestError?.message} ${e.item.name}`);
  for (const execution of executions) {
    assert.equal(execution.requestError, undefined, `${execution.item.name}: ${execution.requestError}`);
    assert.ok((execution.response?.code ?? 500) < 500, `a 5xx: ${answers.join("\n")}`);
  }
  assert.deepEqual(
    summary.run.failures.map((failure) => failure.error.message),
    [],
    answers.join("\n"),
  );
  // The flow went through: the sign was signed under a fresh IRN, and the lookup found it.
  const code = (name: RegExp) => executions.find((e) => name.test(e.item.name))?.response?.code;
  assert.equal(code(/^Sign an invoice, as JSON or UBL 2.1: registers it/), 200, answers.join("\n"));
  assert.equal(code(/^Look up an invoice's fiscalization status/), 200, answers.join("\n"));
});
