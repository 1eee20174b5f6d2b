/*
 * `npm run postman`: the Postman collection and environment of this API, in postman/, generated
 * from openapi.json by Postman's own converter (openapi-to-postmanv2), with what its output lacks
 * for requests that answer on import:
 *
 * - both credential headers: the converter keeps one API key of the two the document declares
 *   (every request would get a 401); API-KEY and API-SECRET come from the environment;
 * - a fresh Idempotency-Key for each request (`{{$guid}}`), not one fixed value that makes the
 *   second invoice a 422 "Idempotency-Key reused";
 * - each invoice sent numbered afresh (a registered IRN is not signed twice): the collection's
 *   pre-request script sets `invoice_number`, and a sign sets `irn`, which the requests by IRN use;
 * - the business's ids in the bodies from the environment, the base URL from the environment (the
 *   converter's is "/"), optional query parameters it fills with "<string>" left out;
 * - a test on each request: no 5xx, and a status openapi.json documents for it.
 *
 * test/postman/postman.test.ts fails when the committed files are not this script's output, and
 * runs the collection with newman against a fresh sandbox.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Converter from "openapi-to-postmanv2";
import { EXAMPLES } from "../src/http/examples.ts";
import { postmanEnvironment } from "../src/runtime/postman-environment.ts";
import { mbsDocument } from "../src/transmission/authority/mbs-mapping.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const COLLECTION_FILE = path.join(ROOT, "postman", "einvoice.postman_collection.json");
export const ENVIRONMENT_FILE = path.join(ROOT, "postman", "einvoice.postman_environment.json");
export const MBS_COLLECTION_FILE = path.join(ROOT, "postman", "mbs.postman_collection.json");

type Media = { example?: unknown; examples?: Record<string, { value?: unknown }> };
type Operation = {
  security?: unknown[];
  responses?: Record<string, unknown>;
  requestBody?: { content?: Record<string, Media> };
};
type OpenApi = { paths: Record<string, Record<string, Operation>> };
type Header = { key: string; value: string; disabled?: boolean; description?: unknown };
type Query = { key: string; value: string; disabled?: boolean };
type Request = {
  method: string;
  header?: Header[];
  url: {
    host?: string[];
    path?: string[];
    query?: Query[];
    variable?: Array<{ key: string; value: string }>;
    raw?: string;
  };
  body?: { mode?: string; raw?: string; options?: unknown };
  auth?: unknown;
};
type Item = { name: string; item?: Item[]; request?: Request; event?: unknown[]; response?: unknown[] };
type Collection = {
  info: Record<string, unknown>;
  item: Item[];
  event?: unknown[];
  variable?: unknown;
  auth?: unknown;
};

/** The collection's pre-request script: a fresh invoice number for each document sent. */
const PRE_REQUEST = [
  "// Each document sent gets a number of its own: a registered IRN is not signed twice.",
  "const path = pm.request.url.getPath();",
  'if (pm.request.method === "POST" && /\\/einvoice\\/(validate|sign|sign-transmit|batch\\/sign|batch\\/sign-transmit)$/.test(path)) {',
  '  const number = "PM" + Date.now().toString(36).toUpperCase() + Math.floor(Math.random() * 1296).toString(36).toUpperCase();',
  '  pm.variables.set("invoice_number", number);',
  "  // The requests by IRN that follow use the last invoice signed.",
  "  if (/\\/einvoice\\/sign$/.test(path)) {",
  "    const date = /\\{\\{invoice_number\\}\\}-\\{\\{service_id\\}\\}-(\\d{8})/.exec(pm.request.body.raw)[1];",
  '    pm.collectionVariables.set("irn", number + "-" + pm.environment.get("service_id") + "-" + date);',
  "  }",
  "}",
];

/** `openapi.json`'s path of a request's URL: `:irn` and `{{irn}}` are `{irn}`. */
function openapiPath(request: Request): string {
  const segments = (request.url.path ?? []).map((segment) =>
    segment.replace(/^:(\w+)$/, "{$1}").replace(/\{\{(\w+)\}\}/g, "{$1}"),
  );
  return `/${segments.join("/")}`;
}

/** The bodies' examples, with the business's ids and fresh invoice numbers from variables. */
function variableBody(raw: string, route: string): string {
  let n = 0;
  return raw
    .replace(/"irn": "INV000\d-\{\{SERVICE_ID\}\}-(\d{8})"/g, (_match, date: string) => {
      // A report is of the invoice signed last; a batch's documents each get a number of their own.
      if (route.endsWith("/report-fiscalization")) return '"irn": "{{irn}}"';
      const suffix = route.includes("/batch/") ? String.fromCharCode(65 + n++) : "";
      return `"irn": "{{invoice_number}}${suffix}-{{service_id}}-${date}"`;
    })
    .replaceAll("{{SERVICE_ID}}", "{{service_id}}")
    .replaceAll("{{BUSINESS_ID}}", "{{business_id}}");
}

function fix(item: Item, spec: OpenApi): void {
  // The converter numbers each item afresh with a random id: without them, the file is the same
  // each time it is made (Postman gives an imported item an id of its own).
  delete (item as { id?: string }).id;
  if (item.item) {
    for (const child of item.item) fix(child, spec);
    return;
  }
  const request = item.request as Request;
  const route = openapiPath(request);
  const operation = spec.paths[route]?.[request.method.toLowerCase()];
  if (!operation) throw new Error(`no operation in openapi.json for ${request.method} ${route}`);
  delete request.auth;
  // Examples of answers would go stale with each change of the service: the answers are its own.
  item.response = [];
  const headers = (request.header ?? []).filter((h) => !/^(api-key|api-secret)$/i.test(h.key));
  for (const header of headers) {
    if (/^idempotency-key$/i.test(header.key)) {
      header.value = "{{$guid}}";
      header.disabled = false;
    }
  }
  const secured = !(Array.isArray(operation.security) && operation.security.length === 0);
  if (secured) {
    headers.push({ key: "API-KEY", value: "{{api_key}}" }, { key: "API-SECRET", value: "{{api_secret}}" });
  }
  request.header = headers;
  for (const variable of request.url.variable ?? []) variable.value = `{{${variable.key}}}`;
  for (const query of request.url.query ?? []) {
    if (/^<\w+>$/.test(query.value)) query.disabled = true;
  }
  // The body is the operation's first request example, as /docs shows it (the converter fakes one
  // from the schema instead, "<uuid>" and all, whatever parametersResolution says).
  const json = operation.requestBody?.content?.["application/json"];
  const example = json?.examples ? Object.values(json.examples)[0]?.value : json?.example;
  if (example !== undefined && request.body) {
    request.body.mode = "raw";
    request.body.raw = variableBody(JSON.stringify(example, null, 2), route);
    request.body.options = { raw: { language: "json" } };
    request.header = [
      ...request.header.filter((h) => !/^content-type$/i.test(h.key)),
      { key: "Content-Type", value: "application/json" },
    ];
  }
  const documented = Object.keys(operation.responses ?? {})
    .filter((code) => /^\d{3}$/.test(code))
    .map(Number);
  item.event = [
    {
      listen: "test",
      script: {
        type: "text/javascript",
        exec: [
          'pm.test("answers without a 5xx, with a status openapi.json documents", () => {',
          "  pm.expect(pm.response.code).to.be.below(500);",
          `  pm.expect(${JSON.stringify(documented)}).to.include(pm.response.code);`,
          "});",
        ],
      },
    },
  ];
}

/** The collection from openapi.json as committed. */
export async function collection(): Promise<Collection> {
  const text = fs.readFileSync(path.join(ROOT, "openapi.json"), "utf8");
  const spec = JSON.parse(text) as OpenApi;
  const converted = await new Promise<Collection>((resolve, reject) => {
    Converter.convert(
      { type: "string", data: text },
      { folderStrategy: "Tags", requestNameSource: "Fallback", parametersResolution: "Example" },
      (err, result) => {
        const data = (result?.output?.[0] as { data?: Collection } | undefined)?.data;
        if (err || !result?.result || !data) {
          reject(new Error(err?.message ?? result?.reason ?? "the converter made no collection"));
        } else resolve(data);
      },
    );
  });
  for (const item of converted.item) fix(item, spec);
  // The base URL and the credentials are the environment's; the last IRN signed is the collection's.
  converted.variable = [{ key: "irn", value: "" }];
  converted.auth = { type: "noauth" };
  converted.event = [{ listen: "prerequest", script: { type: "text/javascript", exec: PRE_REQUEST } }];
  // The converter gives each import a random id: one id, so that an import replaces the last.
  converted.info = { ...converted.info, _postman_id: "2f7c1d7e-5b8a-4f51-9a59-0c6b1b9e6a10" };
  return converted;
}

/** The environment template: where the sandbox answers by default, credentials to fill in. */
export function environmentTemplate() {
  return postmanEnvironment("einvoice", {
    baseUrl: "http://127.0.0.1:8080",
    business_id: "",
    service_id: "",
    api_key: "",
    api_secret: "",
  });
}

export const asFile = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/**
 * The authority's MBS API as a collection: the requests of the MBS spec's endpoint table (its
 * section 2), each named by what the table says it does (the authority's own collection is not
 * among the material this project may copy), on the variables an environment of the authority's
 * sandbox fills as well as the simulator's (`einvoice simulate mbs --postman-environment FILE`):
 * baseUrl, api_key, api_secret, business_id, service_id, tin, entity_id. The invoice is the full
 * sample in MBS's form, as the connector sends it (mbsDocument), numbered afresh for each sign.
 */
export function mbsCollection() {
  const document = mbsDocument(EXAMPLES.invoiceFull);
  const body = (value: unknown) =>
    JSON.stringify(value, null, 2)
      .replace(
        /"irn": "INV000\d-\{\{SERVICE_ID\}\}-(\d{8})"/,
        '"irn": "{{invoice_number}}-{{service_id}}-$1"',
      )
      .replaceAll("{{SERVICE_ID}}", "{{service_id}}")
      .replaceAll("{{BUSINESS_ID}}", "{{business_id}}")
      .replace(/"tin": "20198222-0002"/, '"tin": "{{tin}}"');
  const request = (name: string, method: string, route: string, json?: unknown): Item => ({
    name,
    request: {
      method,
      header: [
        { key: "x-api-key", value: "{{api_key}}" },
        { key: "x-api-secret", value: "{{api_secret}}" },
        ...(json === undefined ? [] : [{ key: "Content-Type", value: "application/json" }]),
      ],
      url: { raw: `{{baseUrl}}${route}`, host: ["{{baseUrl}}"], path: route.split("/").filter(Boolean) },
      ...(json === undefined
        ? {}
        : { body: { mode: "raw", raw: body(json), options: { raw: { language: "json" } } } }),
    },
    response: [],
  });
  const folder = (name: string, item: Item[]): Item => ({ name, item });
  const lists = [
    "countries",
    "currencies",
    "invoice-types",
    "services-codes",
    "vat-exemptions",
    "tax-categories",
    "payment-means",
  ];
  return {
    info: {
      _postman_id: "6e2b0c4d-8f3a-4b71-a5d2-1c9e7f0b3a58",
      name: "MBS e-invoicing API (the authority's, or its simulator)",
      description: {
        content:
          "The authority's MBS API as the MBS spec documents it. Import with an environment of the authority's sandbox or of `einvoice simulate mbs --postman-environment FILE`: the requests are the same.",
        type: "text/plain",
      },
      schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
    },
    item: [
      folder("health and entities", [
        request("Health check", "GET", "/api"),
        request("Search entities", "GET", "/api/v1/entity"),
        request("Get entity", "GET", "/api/v1/entity/{{entity_id}}"),
      ]),
      folder("invoices", [
        request("Validate IRN", "POST", "/api/v1/invoice/irn/validate", {
          business_id: "{{BUSINESS_ID}}",
          invoice_reference: "{{invoice_number}}",
          irn: "{{invoice_number}}-{{SERVICE_ID}}-20261115",
        }),
        request("Validate invoice", "POST", "/api/v1/invoice/validate", document),
        request("Sign invoice", "POST", "/api/v1/invoice/sign", document),
        request("Confirm invoice", "GET", "/api/v1/invoice/confirm/{{irn}}"),
        request("Download invoice", "GET", "/api/v1/invoice/download/{{irn}}"),
        request("Search invoices", "GET", "/api/v1/invoice/{{business_id}}"),
        request("Update payment status", "PATCH", "/api/v1/invoice/update/{{irn}}", {
          payment_status: "PAID",
        }),
      ]),
      folder("exchange", [
        request("Transmit invoice", "POST", "/api/v1/invoice/transmit/{{irn}}"),
        request("Transmission lookup by IRN", "GET", "/api/v1/invoice/transmit/lookup/{{irn}}"),
        request("Transmission lookup by TIN", "GET", "/api/v1/invoice/transmit/lookup/tin/{{tin}}"),
        request("Pull invoices", "GET", "/api/v1/invoice/transmit/pull"),
        request("Self health check", "GET", "/api/v1/invoice/transmit/self-health-check"),
      ]),
      folder("parties and utilities", [
        request("Search parties", "GET", "/api/v1/invoice/party/{{business_id}}"),
        request("Verify TIN", "POST", "/api/v1/utilities/verify-tin/", { tin: "{{tin}}" }),
      ]),
      folder(
        "resources",
        lists.map((list) =>
          request(`Get ${list.replace(/-/g, " ")}`, "GET", `/api/v1/invoice/resources/${list}`),
        ),
      ),
    ],
    variable: [{ key: "irn", value: "" }],
    event: [
      {
        listen: "prerequest",
        script: {
          type: "text/javascript",
          exec: [
            "// Each invoice signed gets a number of its own; the requests by IRN use the last one.",
            'if (pm.request.method === "POST" && /\\/invoice\\/(irn\\/validate|validate|sign)$/.test(pm.request.url.getPath())) {',
            '  const number = "PM" + Date.now().toString(36).toUpperCase();',
            '  pm.variables.set("invoice_number", number);',
            '  if (/\\/invoice\\/sign$/.test(pm.request.url.getPath())) pm.collectionVariables.set("irn", number + "-" + pm.environment.get("service_id") + "-20261115");',
            "}",
          ],
        },
      },
      {
        listen: "test",
        script: {
          type: "text/javascript",
          exec: ['pm.test("answers without a 5xx", () => pm.expect(pm.response.code).to.be.below(500));'],
        },
      },
    ],
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.mkdirSync(path.dirname(COLLECTION_FILE), { recursive: true });
  fs.writeFileSync(COLLECTION_FILE, asFile(await collection()));
  fs.writeFileSync(ENVIRONMENT_FILE, asFile(environmentTemplate()));
  fs.writeFileSync(MBS_COLLECTION_FILE, asFile(mbsCollection()));
  console.log(
    `wrote ${[COLLECTION_FILE, ENVIRONMENT_FILE, MBS_COLLECTION_FILE].map((f) => path.relative(ROOT, f)).join(", ")}`,
  );
}
