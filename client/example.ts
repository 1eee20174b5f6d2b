/**
 * Validate, sign, transmit and look up an invoice with the typed client, against a running server.
 *
 *   npm start                      # the sandbox prints its demo credentials
 *   npx tsx client/example.ts      # uses data/sandbox-credentials.json and the shared sample invoice
 *
 * Settings: EINVOICE_API (default http://127.0.0.1:8080), EINVOICE_API_KEY / EINVOICE_API_SECRET
 * (default: the sandbox's demo credentials), EINVOICE_SHARED_DIR (default ../shared).
 */
import fs from "node:fs";
import path from "node:path";
import { einvoiceClient } from "./index.ts";

const root = path.resolve(import.meta.dirname, "..");
const sandbox = path.join(root, "data", "sandbox-credentials.json");
const demo = fs.existsSync(sandbox)
  ? (JSON.parse(fs.readFileSync(sandbox, "utf8")) as {
      business_id: string;
      service_id: string;
      api_key: string;
      api_secret: string;
    })
  : undefined;
const apiKey = process.env.EINVOICE_API_KEY ?? demo?.api_key;
const apiSecret = process.env.EINVOICE_API_SECRET ?? demo?.api_secret;
const businessId = process.env.EINVOICE_BUSINESS_ID ?? demo?.business_id;
const serviceId = process.env.EINVOICE_SERVICE_ID ?? demo?.service_id;
if (!apiKey || !apiSecret || !businessId || !serviceId) {
  throw new Error(
    "no credentials: start the sandbox (npm start) or set EINVOICE_API_KEY, EINVOICE_API_SECRET, EINVOICE_BUSINESS_ID and EINVOICE_SERVICE_ID",
  );
}

const api = einvoiceClient({
  baseUrl: process.env.EINVOICE_API ?? "http://127.0.0.1:8080",
  apiKey,
  apiSecret,
});

// The shared sample invoice, with this business's ids and an invoice number of its own.
const shared = process.env.EINVOICE_SHARED_DIR ?? path.join(root, "..", "shared");
const invoice = JSON.parse(
  fs
    .readFileSync(path.join(shared, "fixtures", "invoice-full.json"), "utf8")
    .replaceAll("{{BUSINESS_ID}}", businessId)
    .replaceAll("{{SERVICE_ID}}", serviceId)
    .replace("INV0001-", `EX${Date.now()}-`),
);
const irn: string = invoice.irn;

const validated = await api.POST("/api/v1/einvoice/validate", { body: invoice });
if (validated.error)
  throw new Error(`validate: ${validated.error.message}: ${JSON.stringify(validated.error.error)}`);
console.log(`validated  ${irn}: ${validated.data.message}`);

const signed = await api.POST("/api/v1/einvoice/sign", { body: invoice });
if (signed.error) throw new Error(`sign: ${signed.error.message}`);
console.log(`signed     ${irn}: ${signed.data.message}`);

const transmitted = await api.GET("/api/v1/einvoice/transmit/{irn}", { params: { path: { irn } } });
if (transmitted.error) throw new Error(`transmit: ${transmitted.error.message}`);
console.log(`transmit   ${irn}: ${transmitted.data.message}`);

const lookup = await api.GET("/api/v1/einvoice/lookup/{irn}", { params: { path: { irn } } });
if (lookup.error) throw new Error(`lookup: ${lookup.error.message}`);
console.log(`lookup     ${irn}: ${lookup.data.data.status}, payment ${lookup.data.data.payment_status}`);
