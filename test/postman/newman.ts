import fs from "node:fs";
import newman from "newman";

export type PostmanEnvironment = { values: Array<{ key: string; value: string }> };
export type Execution = { item: { name: string }; response?: { code: number }; requestError?: Error };
export type RunSummary = { executions: Execution[]; failures: Array<{ error: { message: string } }> };

/** A Postman environment file as written, with a lookup of its values. */
export function readEnvironment(file: string) {
  const environment = JSON.parse(fs.readFileSync(file, "utf8")) as PostmanEnvironment;
  const value = (key: string) => environment.values.find((v) => v.key === key)?.value;
  return { environment, value };
}

/**
 * The committed collection in `file` run by newman, request after request as Postman's runner runs
 * it, with `environment`; each request's status (or its error) and name, a line each, for messages.
 */
export async function runCollection(file: string, environment: PostmanEnvironment) {
  const run = await new Promise<RunSummary>((resolve, reject) => {
    newman.run(
      {
        collection: JSON.parse(fs.readFileSync(file, "utf8")),
        environment,
        reporters: [],
        timeoutRequest: 30_000,
      },
      (err, summary) => (err ? reject(err) : resolve(summary.run as unknown as RunSummary)),
    );
  });
  const answers = run.executions
    .map((e) => `${e.response?.code ?? e.requestError?.message} ${e.item.name}`)
    .join("\n");
  return { ...run, answers };
}
