import { arithmetic } from "./arithmetic.ts";
import { authorityDisputed, serviceCategory } from "./authority.ts";
import { bidiControls } from "./bidi.ts";
import { productCatalog } from "./catalog.ts";
import { codeLists } from "./code-lists.ts";
import { dates } from "./dates.ts";
import { documentReferences } from "./document-references.ts";
import { irnDate, irnTemplate } from "./irn.ts";
import { precision } from "./precision.ts";
import { rates } from "./rates.ts";
import { supplierTin } from "./supplier.ts";
import { taxBase } from "./tax-base.ts";
import type { Rule } from "./types.ts";
import { typesAndFormats } from "./types-and-formats.ts";
import { unknownFields } from "./unknown-fields.ts";

/** Every rule runs on every document, so one answer reports every problem. */
export const INVOICE_RULES: readonly Rule[] = [
  typesAndFormats,
  codeLists,
  irnTemplate,
  irnDate,
  dates,
  arithmetic,
  precision,
  rates,
  taxBase,
  supplierTin,
  documentReferences,
  serviceCategory,
  authorityDisputed,
  unknownFields,
  productCatalog,
  bidiControls,
];
