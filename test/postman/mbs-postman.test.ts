/*
 * The MBS collection works against the simulator with the environment the simulator writes
 * (`simulate mbs --postman-environment FILE`): the collection an integrator also points at the
 * authority's sandbox, by changing environment only. No database: the simulator keeps its own state.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { asFile, MBS_COLLECTION_FILE, mbsCollection } from "../../scripts/postman.ts";
import { tempDir } from "../helpers.ts";
import { runningSimulator } from "../simulators/mbs/harness.ts";
import { readEnvironment, runCollection } from "./newman.ts";

test("the committed MBS collection is npm run postman's output", () => {
  assert.equal(fs.readFileSync(MBS_COLLECTION_FILE, "utf8"), asFile(mbsCollection()));
});

test("newman runs the MBS collection against the simulator with the environment it wrote: no 5xx, the invoice signed and confirmed", async (t) => {
  const file = path.join(tempDir(t), "mbs-environment.json");
  const { printed } = await runningSimulator(t, ["--postman-environment", file]);
  const { environment, value } = readEnvironment(file);
  assert.equal(value("baseUrl"), printed.url);
  assert.equal(value("api_secret"), printed.api_secret);

  const { executions, failures, answers } = await runCollection(MBS_COLLECTION_FILE, environment);
  assert.ok(executions.length >= 20, answers);
  assert.deepEqual(
    failures.map((failure) => failure.error.message),
    [],
    answers,
  );
  const code = (name: string) => executions.find((e) => e.item.name === name)?.response?.code;
  assert.equal(code("Validate invoice"), 200, answers);
  assert.equal(code("Sign invoice"), 200, answers);
  assert.equal(code("Confirm invoice"), 200, answers);
  assert.equal(code("Transmit invoice"), 200, answers);
});
