import {
  capViolations,
  type DomainCode,
  type DomainErrorOptions,
  MAX_VIOLATIONS,
  summarize,
  type Violation,
} from "../../errors.ts";
import { readUbl, type Signer, type UblRead } from "./read.ts";
import type { UblSchemas } from "./schema.ts";
import { type UblNode, ublTree } from "./tree.ts";
import { parseXml, withXml } from "./xml.ts";

/*
 * A UBL body read into this API's document, from its bytes to the mapping: the safe parse (xml.ts),
 * the UBL 2.1 schema (schema.ts), the elements (tree.ts), the mapping (read.ts). It is all work on
 * the body alone, with no I/O, and answers in plain data, so that it runs on the UBL thread
 * (ubl-read-pool.ts) as well as in place.
 */

/**
 * The largest UBL document read: about 480 invoice lines. Reading costs about 0.12 ms a line on the
 * UBL thread (a 1,000-line invoice 120 to 260 ms, measured by bench/ubl.ts); 512 KiB keeps one
 * document near 60 ms of the thread's time, which the other businesses' documents may wait behind.
 * A document past it is well formed and within the parse's bounds (it is parsed, about 10 ms, to
 * say so) but refused, not read.
 */
export const UBL_READ_BYTES = 512 * 1024;

export type UblReadInput = { body: Uint8Array | string; signer: Signer };

/** A refusal as data: the caller throws it as a DomainError. */
export type UblRefusal = { code: DomainCode; options: DomainErrorOptions };

export type UblReadAnswer = (UblRead & { ok: true; rootPath: string }) | { ok: false; refusal: UblRefusal };

const NOT_SCHEMA_CHECKED: Violation = {
  path: "(ubl)",
  rule: "ubl_schema_not_checked",
  message:
    "not checked against the UBL 2.1 schema: this service has no copy of it (EINVOICE_UBL_SCHEMAS); its mapping checks each element it reads",
};

/** Findings on the UBL that stop the document, in API v1's validation envelope. */
export function refused(violations: Violation[], what: string): UblRefusal {
  const { shown, total } = capViolations(violations, MAX_VIOLATIONS, 0);
  return {
    code: "validation_failed",
    options: {
      message: "Failed to validate invoice",
      details: summarize(
        violations.map((v) => ({ ...v, path: v.xpath ?? v.path })),
        3,
        total,
      ),
      publicMessage: `The UBL invoice was not accepted: ${what}; see error.violations for each element.`,
      violations: shown,
      violationsTotal: total,
    },
  };
}

const notUbl = (reason: string): UblRefusal => ({
  code: "invalid_request",
  options: {
    message: "Invalid request",
    details: `the body is not a UBL 2.1 Invoice or CreditNote this service reads: ${reason}`,
  },
});

/** The body as this API's document for `signer`, or why it cannot be. */
export function readUblBody(input: UblReadInput, schemas: UblSchemas | undefined): UblReadAnswer {
  const body =
    typeof input.body === "string"
      ? input.body
      : Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
  const parsed = parseXml(body);
  if (!parsed.ok) {
    const { rule, message, line, path } = parsed.refusal;
    return {
      ok: false,
      refusal: notUbl(`${message}${line ? ` (line ${line})` : ""}${path ? ` at ${path}` : ""} [${rule}]`),
    };
  }
  const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.length;
  if (bytes > UBL_READ_BYTES) {
    parsed.doc.dispose();
    return {
      ok: false,
      refusal: {
        code: "payload_too_large",
        options: {
          message: "Request body too large",
          details: `a UBL document of ${Math.ceil(bytes / 1024)} KiB: at most ${UBL_READ_BYTES / 1024} KiB (about 480 invoice lines) is read as UBL; send a larger invoice as this API's JSON document`,
        },
      },
    };
  }
  const schemaFindings = withXml(parsed.doc, (doc) => schemas?.check(doc, parsed.root.kind) ?? []);
  if (schemaFindings.length > 0) {
    return {
      ok: false,
      refusal: refused(
        schemaFindings.map((f) => ({
          path: "(ubl)",
          rule: "ubl_schema",
          message: f.message.trim(),
          ...(f.xpath ? { xpath: f.xpath } : {}),
        })),
        `it breaks the UBL 2.1 schema (${parsed.root.kind})`,
      ),
    };
  }
  let tree: UblNode;
  try {
    tree = ublTree(typeof body === "string" ? body : body.toString("utf8"));
  } catch (err) {
    // The bytes libxml2 accepted: a second parse that fails anyway refuses them all the same.
    return { ok: false, refusal: notUbl(`${err instanceof Error ? err.message : String(err)} [malformed]`) };
  }
  const read = readUbl(tree, input.signer);
  if (read.refusals.length > 0)
    return { ok: false, refusal: refused(read.refusals, "it says what this API's document cannot carry") };
  const warnings = schemas ? read.warnings : [NOT_SCHEMA_CHECKED, ...read.warnings];
  return { ok: true, ...read, warnings, rootPath: tree.path };
}
