import assert from "node:assert/strict";
import { test } from "node:test";
import type { Principal } from "../../../src/businesses/business-service.ts";
import { invoiceBatches } from "../../../src/invoices/registration/batch.ts";

const principal = { businessId: "b" } as Principal;

test("a document's store failing while the batch still checks the others fails the batch, and no rejection goes unhandled", async (t) => {
  const unhandled: unknown[] = [];
  const listener = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", listener);
  t.after(() => process.off("unhandledRejection", listener));

  const committed: number[] = [];
  const { signMany } = invoiceBatches<{ n: number }>({
    // Each check takes a moment, as a real one waits on the database or a thread.
    check: async (_principal, body) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return body as { n: number };
    },
    // The first document's store fails at once, for no fault of the document.
    commit: async (_principal, { n }) => {
      if (n === 0) throw new Error("the store failed");
      committed.push(n);
      return { warnings: [], warningsBeyond: 0 };
    },
  });
  await assert.rejects(
    signMany(
      principal,
      [0, 1, 2, 3].map((n) => ({ n })),
      false,
    ),
    /the store failed/,
  );
  // A turn for any rejection left without a listener to be reported.
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(unhandled, []);
  assert.deepEqual(committed, [1, 2, 3], "the documents after it were still checked and stored");
});
