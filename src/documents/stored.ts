import type { Sealer } from "../crypto/sealer.ts";
import type { InvoiceTable } from "../db/schema.ts";
import { SEALED_FIELDS } from "./schema.ts";

/** Splits a submitted document into what is stored in the open and the sealed confidential fields. */
export function storeDocument(document: Record<string, unknown>, irn: string, sealer: Pick<Sealer, "seal">) {
  const open: Record<string, unknown> = { ...document };
  const secret: Record<string, unknown> = {};
  for (const field of SEALED_FIELDS) {
    if (field in open) {
      secret[field] = open[field];
      delete open[field];
    }
  }
  return {
    document: JSON.stringify(open),
    sealed: Object.keys(secret).length > 0 ? sealer.seal(JSON.stringify(secret), irn) : null,
  };
}

/** The document exactly as it was submitted (and signed). */
export function openDocument(
  row: Pick<InvoiceTable, "irn" | "document" | "sealed">,
  sealer: Pick<Sealer, "open">,
) {
  const document = JSON.parse(row.document) as Record<string, unknown>;
  if (row.sealed) Object.assign(document, JSON.parse(sealer.open(row.sealed, row.irn)));
  return document;
}

/**
 * The invoice's currency, from the part of the document stored in the open: the payment, report
 * and verification paths need only this field, not the sealed parties.
 */
export function currencyOf(row: Pick<InvoiceTable, "document">): string | undefined {
  const { document_currency_code: currency } = JSON.parse(row.document) as {
    document_currency_code?: unknown;
  };
  return typeof currency === "string" ? currency : undefined;
}
