import assert from "node:assert/strict";
import { test } from "node:test";
import { XmlDocument } from "libxml2-wasm";
import { loadUblSchemas } from "../../../src/documents/ubl/schema.ts";
import { build, type Json, tenant } from "../../helpers.ts";
import { UBL_SCHEMAS } from "./examples.ts";
import { generateUbl, randomSupplier } from "./generate.ts";
import { en16931 } from "./rules.ts";

const PREFIX = "/api/v1/einvoice";
const XML = { "content-type": "application/xml" };
/** Invoices and credit notes taken round; EINVOICE_UBL_ROUNDTRIPS=1000 for the full run. */
const COUNT = Number(process.env.EINVOICE_UBL_ROUNDTRIPS ?? 40);
/** Every how many the EN 16931 rules check UBL out as well as the schema (they take 0.1–1 s each). */
const RULES_EVERY = Number(process.env.EINVOICE_UBL_RULES_EVERY ?? 8);

test(`${COUNT} generated UBL invoices and credit notes: sign, UBL out (schema and EN 16931), convert back to the signed document`, async (t) => {
  const { app, ctx } = await build(t, { EINVOICE_UBL_SCHEMAS: UBL_SCHEMAS });
  const schemas = loadUblSchemas(UBL_SCHEMAS);
  const failures: string[] = [];
  for (let seed = 1; seed <= COUNT; seed++) {
    const who = await tenant(ctx, { tin: `${String(10_000_000 + seed)}-0001` });
    const supplier = { ...randomSupplier(seed), tin: who.tin };
    const { xml } = generateUbl(seed, { supplier, carriable: true });
    const headers = { ...who.headers, ...XML };
    const convert = (payload: string) =>
      app.inject({ method: "POST", url: `${PREFIX}/ubl/convert`, headers, payload });
    const converted = await convert(xml);
    if (converted.statusCode !== 200) {
      failures.push(`seed ${seed} convert ${converted.statusCode}: ${converted.body.slice(0, 600)}`);
      continue;
    }
    const irn = String((converted.json() as { data: { document: Json } }).data.document.irn);
    const signed = await app.inject({ method: "POST", url: `${PREFIX}/sign`, headers, payload: xml });
    if (signed.statusCode !== 200) {
      failures.push(`seed ${seed} sign ${signed.statusCode}: ${signed.body.slice(0, 900)}`);
      continue;
    }
    const out = await app.inject({ url: `${PREFIX}/${irn}.xml`, headers: who.headers });
    if (out.statusCode !== 200) {
      failures.push(`seed ${seed} out ${out.statusCode}: ${out.body.slice(0, 600)}`);
      continue;
    }
    const parsed = XmlDocument.fromString(out.body);
    const kind = parsed.root.name as "Invoice" | "CreditNote";
    const schemaFindings = schemas.check(parsed, kind);
    parsed.dispose();
    if (schemaFindings.length > 0)
      failures.push(`seed ${seed} out schema: ${JSON.stringify(schemaFindings.slice(0, 3))}`);
    if (seed % RULES_EVERY === 0) {
      const { fatal } = await en16931(out.body);
      if (fatal.length > 0)
        failures.push(`seed ${seed} out EN 16931: ${fatal.map((f) => `${f.id} ${f.location}`).join("; ")}`);
    }
    const back = await convert(out.body);
    const record = (await app.inject({ url: `${PREFIX}/${irn}`, headers: who.headers })).json() as {
      data: { document: Json };
    };
    try {
      assert.deepEqual((back.json() as { data: { document: Json } }).data.document, record.data.document);
    } catch (err) {
      failures.push(`seed ${seed} round trip: ${(err as Error).message.slice(0, 1200)}`);
    }
  }
  schemas.dispose();
  assert.deepEqual(failures, []);
});
