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
};
