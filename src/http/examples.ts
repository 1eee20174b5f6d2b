import fs from "node:fs";

/**
 * The shared sample bodies, as the OpenAPI document's examples (a test keeps them equal to the
 * shared fixtures). `{{BUSINESS_ID}}` and `{{SERVICE_ID}}` stay placeholders: a business's id and
 * its service id go there, and the IRN's middle segment must be the service id.
 */
const read = (name: string) =>
  JSON.parse(fs.readFileSync(new URL(`./examples/${name}.json`, import.meta.url), "utf8")) as Record<
    string,
    unknown
  >;

export const EXAMPLES = {
  invoiceFull: read("invoice-full"),
  invoiceMinimal: read("invoice-minimal"),
  report: read("report-fiscalization"),
  partialPayment: {
    payment_status: "PARTIAL",
    amount: 25000,
    payment_update_date: "2026-11-20",
    reference: "TRF-889",
  },
  fullPayment: { payment_status: "PAID" },
};

/**
 * What openapi.json and /docs call each example (the swagger plugin numbers a schema's examples
 * `example1`, `example2`, …, which says nothing in a list of them or in a Postman collection).
 */
const NAMED: ReadonlyArray<[unknown, string, string]> = [
  [
    EXAMPLES.invoiceFull,
    "full-invoice",
    "A full invoice: every party's details, notes, two lines, charges and VAT",
  ],
  [EXAMPLES.invoiceMinimal, "minimal-invoice", "A minimal invoice: what a valid document cannot leave out"],
  [EXAMPLES.partialPayment, "partial-payment", "A part payment of 25,000.00, with its bank reference"],
  [EXAMPLES.fullPayment, "paid", "Paid: the whole outstanding balance, today"],
];
const NAMES = new Map(NAMED.map(([value, name, summary]) => [JSON.stringify(value), { name, summary }]));

/** The examples of a media type, named by what they show where they are known, else as they were. */
export function namedExamples(
  examples: Record<string, { value?: unknown; summary?: string }>,
): Record<string, { value?: unknown; summary?: string }> {
  const named: Record<string, { value?: unknown; summary?: string }> = {};
  for (const [key, example] of Object.entries(examples)) {
    const known = NAMES.get(JSON.stringify(example.value));
    if (known) named[known.name] = { summary: known.summary, ...example };
    else named[key] = example;
  }
  return named;
}
