import assert from "node:assert/strict";
import { test } from "node:test";
import type { RuleContext } from "../../../src/documents/validation/rules/types.ts";
import { INLINE_LINES, validateInvoice } from "../../../src/documents/validation/validation.ts";
import { validationPool } from "../../../src/documents/validation/validation-pool.ts";
import { DomainError } from "../../../src/errors.ts";
import { fixture, type Json } from "../../helpers.ts";
import { leastWait } from "../../threads/event-loop-wait.ts";

const WHO = { business_id: "5b7d3d2e-8f7a-4c1e-9b1a-2f8e6c4d1a00", service_id: "AB12CD34" };
const CTX: RuleContext = {
  business: { id: WHO.business_id, service_id: WHO.service_id, tin: "20198222-0002" },
  knownProducts: new Set(["2523.29"]),
};

/** The full fixture with `count` copies of its line, float noise in some amounts, and odd fields. */
function large(count: number): Json {
  const doc = fixture("invoice-full", WHO);
  const line = (doc.invoice_line as Json[])[0] as Json;
  doc.invoice_line = Array.from({ length: count }, (_, i) => ({
    ...line,
    ...(i % 7 === 0 ? { line_extension_amount: (line.line_extension_amount as number) + 1e-10 } : {}),
    ...(i % 11 === 0 ? { hsn_code: "9999.99", colour: "red" } : {}),
  }));
  doc.business_id = WHO.business_id.toUpperCase();
  return doc;
}

test("a large document checked on the thread gets the answer it gets in place", async (t) => {
  const pool = validationPool({ thread: true });
  t.after(() => pool.close());
  for (const doc of [large(INLINE_LINES + 1), large(3000)]) {
    const inPlace = validateInvoice(doc, CTX);
    const threaded = await pool.validate(doc, CTX);
    assert.deepEqual(threaded.errors, inPlace.errors.slice(0, 200));
    assert.equal(
      threaded.errors.length + threaded.errorsBeyond,
      inPlace.errors.length + inPlace.errorsBeyond,
    );
    assert.deepEqual(threaded.warnings, inPlace.warnings.slice(0, 200));
    assert.equal(threaded.warnings.length + threaded.warningsBeyond, inPlace.warnings.length);
    if ((doc.invoice_line as Json[]).length > 1000)
      assert.ok(inPlace.warnings.length > 200, "enough warnings to be capped");
    // The denoised amounts and the lower-cased id come back; the submitted body is untouched.
    assert.deepEqual(threaded.document, inPlace.document);
    assert.equal((threaded.document as Json).business_id, WHO.business_id);
    assert.equal(doc.business_id, WHO.business_id.toUpperCase());
  }
  // A new catalog is taken up.
  const doc = large(INLINE_LINES + 1);
  const known = await pool.validate(doc, { ...CTX, knownProducts: new Set(["2523.29", "9999.99"]) });
  assert.ok(!known.warnings.some((w) => w.rule === "product_catalog"), "9999.99 is in the new catalog");
});

test("on the thread too, a blank optional field is left out and a missing invoice_kind derived", async (t) => {
  const pool = validationPool({ thread: true });
  t.after(() => pool.close());
  const doc = large(INLINE_LINES + 1);
  delete doc.invoice_kind;
  Object.assign(doc, { order_reference: "", note: " " });
  const inPlace = validateInvoice(doc, CTX);
  const threaded = await pool.validate(doc, CTX);
  assert.deepEqual(threaded.errors, inPlace.errors.slice(0, 200));
  assert.deepEqual(threaded.warnings, inPlace.warnings.slice(0, 200));
  assert.ok(threaded.warnings.some((w) => w.rule === "invoice_kind_derived"));
  assert.deepEqual(threaded.document, inPlace.document);
  const checked = threaded.document as Json;
  assert.equal(checked.invoice_kind, "B2B");
  assert.ok(!("order_reference" in checked) && !("note" in checked));
  assert.equal(doc.order_reference, "", "the submitted body is untouched");
});

test("errors past the 200 listed come back counted, whatever their number", async (t) => {
  const pool = validationPool({ thread: true });
  t.after(() => pool.close());
  const doc = {
    ...fixture("invoice-minimal", WHO),
    invoice_line: Array.from({ length: 10_000 }, () => ({ x: 1 })),
  };
  const inPlace = validateInvoice(doc, CTX);
  const threaded = await pool.validate(doc, CTX);
  assert.equal(threaded.errors.length, 200);
  assert.equal(threaded.errors.length + threaded.errorsBeyond, inPlace.errors.length + inPlace.errorsBeyond);
  assert.ok(threaded.errorsBeyond > 50_000, "every line's missing fields are counted");
});

test("checking a 10,000-line document on the thread leaves the event loop free", async (t) => {
  const pool = validationPool({ thread: true });
  t.after(() => pool.close());
  const doc = large(10_000);
  await pool.validate(doc, CTX); // the thread's start and warm-up are not what is measured
  // Each measured three times, the least kept (see leastWait), with a 5 ms timer.
  const least = (work: () => Promise<unknown>) => leastWait(work, 5);
  const threaded = await least(async () => {
    for (let i = 0; i < 3; i++) await pool.validate(doc, CTX);
  });
  // The same checks in place, for scale: on a loaded machine both waits grow.
  const inPlace = await least(async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      validateInvoice(doc, CTX);
    }
  });
  t.diagnostic(
    `the event loop waited at most ${threaded.toFixed(0)} ms (in place: ${inPlace.toFixed(0)} ms)`,
  );
  // A pool that checked in place would hold the loop for all three checks at once: three times
  // `inPlace`. On the thread the loop only copies the document over and the answer back: half of one
  // check on a quiet machine, up to 0.6 of one measured with two other test processes on 2 cores.
  assert.ok(threaded < 50 || threaded < inPlace, `the event loop waited ${threaded.toFixed(0)} ms`);
});

test("the thread takes each business's documents in turn; past its share, a business is refused with a 503 naming its backlog", async (t) => {
  const pool = validationPool({ thread: true, share: 2 });
  t.after(() => pool.close());
  const other: RuleContext = { business: { id: "another", service_id: "ZZ99YY88" } };
  const order: string[] = [];
  const check = (ctx: RuleContext, name: string) =>
    pool.validate(large(INLINE_LINES + 1), ctx).then(
      () => order.push(name),
      (err: unknown) => {
        order.push(`${name} refused`);
        throw err;
      },
    );
  const mine = Array.from({ length: 5 }, () => check(CTX, "A"));
  const theirs = check(other, "B");
  const settled = await Promise.allSettled([...mine, theirs]);
  // A: one checking, two waiting, two refused; B's one comes right after A's first.
  const refused = settled.filter((result) => result.status === "rejected");
  assert.equal(refused.length, 2);
  for (const result of refused) {
    const err = (result as PromiseRejectedResult).reason;
    assert.ok(err instanceof DomainError && err.code === "service_unavailable" && err.busy);
    assert.match(
      err.details,
      /^the validation thread is busy: this business has 2 documents waiting to be checked and 1 being checked/,
    );
  }
  assert.deepEqual(order, ["A refused", "A refused", "A", "B", "A", "A"]);
});
