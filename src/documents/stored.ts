import type { Sealer } from "../crypto/sealer.ts";
import { type CanonicalMember, joinMembers } from "../crypto/signer.ts";
import type { InvoiceTable } from "../db/schema.ts";
import { SEALED_FIELDS } from "./schema.ts";

const SEALED: ReadonlySet<string> = new Set(SEALED_FIELDS);

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

/**
 * storeDocument from the document's canonical members (canonicalMembers, for its signed form): the
 * open part stored as its own canonical form and the confidential fields sealed as theirs, without
 * serializing the document again. The stored text's keys are in code-unit order; the document it
 * opens to is the same (JSON objects are unordered).
 */
export function storeMembers(
  members: readonly CanonicalMember[],
  irn: string,
  sealer: Pick<Sealer, "seal">,
): { document: string; sealed: string | null } {
  const open: CanonicalMember[] = [];
  const secret: CanonicalMember[] = [];
  for (const member of members) (SEALED.has(member[0]) ? secret : open).push(member);
  return {
    document: joinMembers(open),
    sealed: secret.length > 0 ? sealer.seal(joinMembers(secret), irn) : null,
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
