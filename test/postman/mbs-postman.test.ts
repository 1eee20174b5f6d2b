/*
 * The MBS collection works against the simulator with the environment the simulator writes
 * (`simulate mbs --postman-environment FILE`): the collection an integrator also points at the
 * authority's sandbox, by changing environment only. No database: the simulator keeps its own state.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import newman from "newman";
import { asFile, MBS_COLLECTION_FILE, mbsCollection } from "../../scripts/postman.ts";
import { cleanEnv } from "../cli/run.ts";
import { REPO_ROOT, tempDir } from "../helpers.ts";

test("the committed MBS collection is npm run postman's output", () => {
  assert.equal(fs.readFileSync(MBS_COLLECTION_FILE, "utf8"), asFile(mbsCollection()));
});

test("newman runs the MBS collection against the simulator with the environment it wrote: no 5xx, the invoice signed and confirmed", async (t) => {
  const file = path.join(tempDir(t), "mbs-environment.json");
  const child = spawn(
    process.execPath,
    ["bin/einvoice.js", "simulate", "mbs", "--port", "0", "--postman-environment", file],
    { cwd: REPO_ROOT, env: cleanEnv({}), stdio: ["ignore", "pipe", "pipe"] },
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const printed = await new Promise<{ url: string; api_secret: string }>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      if (stdout.includes("\n")) resolve(JSON.parse(stdout.slice(0, stdout.indexOf("\n"))));
    });
    child.on("exit", (code) => reject(new Error(`simulate mbs exited ${code}: ${stderr}`)));
  });
  const environment = JSON.parse(fs.readFileSync(file, "utf8")) as {
    values: Array<{ key: string; value: string }>;
  };
  const value = (key: string) => environment.values.find((v) => v.key === key)?.value;
  assert.equal(value("baseUrl"), printed.url);
  assert.equal(value("api_secret"), printed.api_secret);

  type Execution = { item: { name: string }; response?: { code: number }; requestError?: Error };
  const summary = await new Promise<{
    run: { executions: Execution[]; failures: Array<{ error: { message: string } }> };
  }>((resolve, reject) => {
    newman.run(
      {
        collection: JSON.parse(fs.readFileSync(MBS_COLLECTION_FILE, "utf8")),
        environment,
        reporters: [],
        timeoutRequest: 30_000,
      },
      (err, result) => (err ? reject(err) : resolve(result as never)),
    );
  });
  const executions = summary.run.executions;
  const answers = executions
    .map((e) => `${e.response?.code ?? e.requestError?.message} ${e.item.name}`)
    .join("\n");
  assert.ok(executions.length >= 20, answers);
  assert.deepEqual(
    summary.run.failures.map((failure) => failure.error.message),
    [],
    answers,
  );
  const code = (name: string) => executions.find((e) => e.item.name === name)?.response?.code;
  assert.equal(code("Validate invoice"), 200, answers);
  assert.equal(code("Sign invoice"), 200, answers);
  assert.equal(code("Confirm invoice"), 200, answers);
  assert.equal(code("Transmit invoice"), 200, answers);
});
