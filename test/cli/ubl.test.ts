import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { writeUbl } from "../../src/documents/ubl/write.ts";
import { UBL_SCHEMAS } from "../documents/ubl/examples.ts";
import { ENGINE, freshInvoice, listen, tempDir, tenant } from "../helpers.ts";
import { cli, failed, oneJson, TIMEOUT } from "./run.ts";

test(`UBL from the command line on ${ENGINE}: ubl convert, invoices validate|sign --file (XML or JSON), invoices xml`, {
  timeout: TIMEOUT * 2,
}, async (t) => {
  const { ctx, url, databaseUrl, dir } = await listen(t, { EINVOICE_UBL_SCHEMAS: UBL_SCHEMAS });
  const a = await tenant(ctx);
  const work = tempDir(t);
  const credentials = ["--api", url, "--key", a.api_key, "--secret", a.api_secret];
  const invoice = freshInvoice(a);
  const irn = String(invoice.irn);
  const xmlFile = path.join(work, "invoice.xml");
  fs.writeFileSync(xmlFile, writeUbl({ irn, document: invoice }));

  const converted = oneJson(await cli(["ubl", "convert", xmlFile, ...credentials], {}));
  assert.equal((converted.data as { document: { irn: string } }).document.irn, irn);
  const validated = oneJson(await cli(["invoices", "validate", "--file", xmlFile, ...credentials], {}));
  assert.equal(validated.message, "Invoice validated sucessfully");
  const signed = oneJson(await cli(["invoices", "sign", "--file", xmlFile, ...credentials], {}));
  assert.equal(signed.message, "Invoice signed successfully");

  // Signed again: the answer printed as it came, and a failing exit.
  const again = await cli(["invoices", "sign", "--file", xmlFile, ...credentials], {});
  assert.equal(again.code, 1);
  assert.equal((JSON.parse(again.stdout) as { message: string }).message, "IRN already exists.");
  assert.match(again.stderr, /sign answered 400/);

  // This API's JSON document goes through the same command.
  const jsonFile = path.join(work, "invoice.json");
  fs.writeFileSync(jsonFile, JSON.stringify(freshInvoice(a, "invoice-minimal")));
  assert.equal(
    oneJson(await cli(["invoices", "sign", "--file", jsonFile, ...credentials], {})).message,
    "Invoice signed successfully",
  );

  // The operator's copy as UBL, from the database.
  const out = path.join(work, "out.xml");
  const written = oneJson(
    await cli(["invoices", "xml", irn, "--out", out], {
      EINVOICE_DATABASE_URL: databaseUrl,
      EINVOICE_DATA_DIR: dir,
    }),
  );
  assert.equal(written.written, out);
  assert.match(fs.readFileSync(out, "utf8"), new RegExp(`<cbc:ID>${irn}</cbc:ID>`));
  failed(
    await cli(["invoices", "xml", irn, "--received"], {
      EINVOICE_DATABASE_URL: databaseUrl,
      EINVOICE_DATA_DIR: dir,
    }),
    /--received needs --business/,
  );
});
