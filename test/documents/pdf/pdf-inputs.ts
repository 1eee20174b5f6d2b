/**
 * Inputs of the invoice PDF renderer, shared by its tests and `npm run bench:pdf`: the shared
 * fixtures with QR texts shaped like the real ones, and a generated invoice of many lines. Every
 * byte is derived from fixed seeds, so the PDFs (and the visual reference) are the same each run.
 */
import { createHash } from "node:crypto";
import type { InvoicePdfInput } from "../../../src/documents/pdf/render.ts";
import { fixture, type Json } from "../../helpers.ts";

const WHO = { business_id: "5b7d3d2e-8f7a-4c1e-9b1a-2f8e6c4d1a00", service_id: "AB12CD34" };

/** `length` bytes from a seed: SHA-256 of the seed and a counter, one block after the other. */
export function seededBytes(seed: string, length: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * 32 < length; i++) {
    blocks.push(createHash("sha256").update(`${seed}:${i}`).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/** The platform's QR text: base64 of an RSA-2048 ciphertext (256 bytes), 344 characters. */
export const QR_TEXT = seededBytes("platform-qr", 256).toString("base64");

/** A compact JWS as the verification QR carries it: header, payload and an Ed25519 signature. */
export const VERIFICATION_TEXT = [
  Buffer.from(JSON.stringify({ alg: "EdDSA", kid: "ed25519-2026-01", typ: "JWT" })).toString("base64url"),
  seededBytes("verification-payload", 188).toString("base64url"),
  seededBytes("verification-signature", 64).toString("base64url"),
].join(".");

export const SIGNATURE = {
  kid: "ed25519-2026-01",
  hash: seededBytes("signature-hash", 32).toString("hex"),
};

export const YORUBA = "Ọlọ́runṣọlá Ẹ̀kọ́ Àdìó";
export const HAUSA = "Ɗanjuma Ƙauye Ɓaƙo";

export function pdfInput(document: Json): InvoicePdfInput {
  return {
    irn: typeof document.irn === "string" ? document.irn : "INV0001-AB12CD34-20261115",
    status: "TRANSMITTED",
    document,
    qrText: QR_TEXT,
    verificationText: VERIFICATION_TEXT,
    signature: SIGNATURE,
    signedAt: "2026-11-15T14:31:02.123Z",
  };
}

export const fullInvoice = (): Json => fixture("invoice-full", WHO);
export const minimalInvoice = (): Json => fixture("invoice-minimal", WHO);

/** A line's item name: mostly plain, some very long, some Yorùbá or Hausa; each unique by its number. */
export function lineName(index: number): string {
  if (index % 10 === 3) {
    return `Item ${index} ${"reinforced concrete culvert section with galvanised fittings ".repeat(5).trim()}`;
  }
  if (index % 7 === 0) return `${YORUBA} ${index}`;
  if (index % 11 === 5) return `${HAUSA} ${index} ₦`;
  return `Item ${index} building material`;
}

/** The full invoice with `count` lines generated in place of its two. */
export function manyLines(count: number): Json {
  const document = fullInvoice();
  const template = (document.invoice_line as Json[])[0] as Json;
  document.invoice_line = Array.from({ length: count }, (_, index) => ({
    ...template,
    item: {
      name: lineName(index),
      description: `Batch ${index}, 50 kg bag`,
      sellers_item_identification: `SKU-${index}`,
    },
  }));
  document.accounting_customer_party = {
    ...(document.accounting_customer_party as Json),
    party_name: `${YORUBA} Trading`,
  };
  return document;
}

/**
 * The full invoice with `count` short lines (about 110 characters of JSON each, the required fields
 * alone): at 10,000 (MAX_LINES), 1.6 million characters, the most lines a PDF is printed with.
 */
export function shortLines(count: number): Json {
  const document = fullInvoice();
  document.invoice_line = Array.from({ length: count }, (_, index) => ({
    hsn_code: "2523.29",
    product_category: "Cement",
    invoiced_quantity: 1,
    line_extension_amount: index,
    item: { name: `Item ${index}` },
    price: { price_amount: index },
  }));
  return document;
}

/**
 * The full invoice with `count` lines of the longest texts a signed invoice's line may have (2,000
 * characters of JSON each): at 1,000, just under the 2 Mi characters a PDF is printed from.
 */
export function longLines(count: number): Json {
  const document = manyLines(count);
  for (const [index, line] of (document.invoice_line as Json[]).entries()) {
    line.product_category = `${index} ${"Building materials and fittings ".repeat(10)}`.slice(0, 300);
    line.item = {
      name: `${index} ${lineName(index)} ${"wide ".repeat(60)}`.slice(0, 300),
      description: `${index} ${"galvanised fittings, 50 kg bags, delivered to site ".repeat(20)}`.slice(
        0,
        1000,
      ),
      sellers_item_identification: `SKU-${index}-${"X".repeat(100)}`.slice(0, 100),
    };
  }
  return document;
}
