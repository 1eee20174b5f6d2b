import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { build, fixture, type Json, tenant } from "../../helpers.ts";

type Step = (string | number)[];
type Mutation = { path: Step; kind: "replace" | "delete" | "extra"; value?: unknown };
type Finding = { path: string; related?: string[] };

const render = (path: Step) =>
  path.reduce<string>(
    (out, key) => (typeof key === "number" ? `${out}[${key}]` : out ? `${out}.${key}` : key),
    "",
  );

/** Every node of a JSON value with its path, the root excluded. */
function nodes(value: unknown, path: Step = []): Step[] {
  const children: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : typeof value === "object" && value !== null
      ? Object.entries(value)
      : [];
  return children.flatMap(([key, child]) => [[...path, key], ...nodes(child, [...path, key])]);
}

/** Applies `m`; false when an earlier mutation already removed the place it points at. */
function apply(doc: Json, m: Mutation): boolean {
  const parentPath = m.path.slice(0, -1);
  const key = m.path[m.path.length - 1] as string | number;
  let parent: unknown = doc;
  for (const step of parentPath) {
    // An earlier mutation may have replaced an ancestor: then this one has nothing to change.
    if (typeof parent !== "object" || parent === null) return false;
    parent = (parent as Record<string | number, unknown>)[step];
  }
  if (typeof parent !== "object" || parent === null) return false;
  const container = parent as Record<string | number, unknown>;
  if (m.kind === "delete") {
    if (Array.isArray(container) && typeof key === "number") container.splice(key, 1);
    else delete container[key];
  } else if (m.kind === "extra") {
    const target = container[key];
    if (typeof target !== "object" || target === null || Array.isArray(target)) return false;
    (target as Json).x_unknown_field = m.value;
  } else {
    container[key] = m.value;
  }
  return true;
}

/** A finding names a mutated path when it is that path, inside it, or contains it. */
function touches(finding: string, mutated: string): boolean {
  const within = (inner: string, outer: string) =>
    inner === outer || inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`);
  return within(finding, mutated) || within(mutated, finding);
}

// Plausible values as well as garbage: valid codes and dates in the wrong place make the
// cross-field rules fire, not only the type checks.
const replacement = fc.oneof(
  fc.constantFrom(
    "380",
    "384",
    "JPY",
    "KWD",
    "NG-LA",
    "NG-LA-IKE",
    "ZERO_VAT",
    "B2C",
    "PAID",
    "2026-01-01",
    "2027-12-31",
    "ZZZ",
  ),
  fc.double({ noNaN: true }),
  fc.integer({ min: -1_000_000, max: 10_000_000 }),
  fc.double({ min: 0, max: 1_000_000, noNaN: true }).map((x) => Math.round(x * 1000) / 1000),
  fc.string({ maxLength: 12 }),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 2 }),
);

test("random mutations of the valid fixtures: never a 5xx, and every 400 names a mutated path", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const bases = [fixture("invoice-full", a), fixture("invoice-minimal", a)];
  const documents = bases.map((doc) => ({ doc, paths: nodes(doc) }));

  const scenario = fc.constantFrom(...documents).chain(({ doc, paths }) =>
    fc.record({
      doc: fc.constant(doc),
      mutations: fc.array(
        fc.record({
          path: fc.constantFrom(...paths),
          kind: fc.constantFrom("replace", "replace", "delete", "extra") as fc.Arbitrary<Mutation["kind"]>,
          value: replacement,
        }),
        { minLength: 1, maxLength: 3 },
      ),
    }),
  );

  await fc.assert(
    fc.asyncProperty(scenario, async ({ doc, mutations }) => {
      const mutated = structuredClone(doc);
      const applied = mutations.filter((m) => apply(mutated, m));
      const res = await app.inject({
        method: "POST",
        url: "/api/v1/einvoice/validate",
        headers: a.headers,
        payload: mutated,
      });
      assert.ok(res.statusCode < 500, `${res.statusCode}: ${res.body}`);
      if (res.statusCode === 200) return;
      assert.equal(res.statusCode, 400, res.body);
      const body = res.json() as { message: string; error: { details: string; violations?: Finding[] } };
      assert.equal(body.message, "Failed to validate invoice");
      // fc.jsonValue may make a `__proto__` or `constructor` key: the body parser refuses such a body
      // before any check (prototype poisoning), so its 400 names the body, not a field.
      if (/"(?:__proto__|constructor)":/.test(JSON.stringify(mutated))) {
        assert.match(body.error.details, /^the request body is not valid JSON/, res.body);
        assert.equal(body.error.violations, undefined, res.body);
        return;
      }
      assert.ok(body.error.violations, res.body);
      const changed = applied.map((m) => render(m.path));
      const named = body.error.violations.some((v) =>
        changed.some((c) => [v.path, ...(v.related ?? [])].some((p) => touches(p, c))),
      );
      assert.ok(
        named,
        `mutated ${changed.join(", ")} but the violations name ${JSON.stringify(body.error.violations)}`,
      );
    }),
    { numRuns: 400 },
  );
});
