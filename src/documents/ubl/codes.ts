/*
 * The two code lists whose UBL values differ from this API's, each as one table read both ways.
 *
 * Document types: UBL carries UN/CEFACT 1001, whose 380 is the commercial invoice and 381 the credit
 * note. This API follows the authority's list (resources/invoice-types), where the same numbers mean
 * the reverse: 380 Credit Note, 381 Commercial Invoice. So each code is translated by its meaning,
 * and a code whose meaning the authority's list does not have is refused, naming it.
 *
 * VAT categories: UBL carries UNCL 5305 letters; this API the authority's tax categories. S, Z, E and
 * O have Nigerian counterparts; reverse charge, intra-community supply and the others do not.
 */

export type TypeCode = {
  /** UN/CEFACT 1001, as UBL writes it. */
  ubl: string;
  /** The authority's code, as this API's documents carry it. */
  ours: string;
  meaning: string;
  /** The UBL document that carries it. */
  root: "Invoice" | "CreditNote";
};

export const TYPE_CODES: readonly TypeCode[] = [
  { ubl: "380", ours: "381", meaning: "commercial invoice", root: "Invoice" },
  { ubl: "381", ours: "380", meaning: "credit note", root: "CreditNote" },
  { ubl: "383", ours: "384", meaning: "debit note", root: "Invoice" },
  // The authority lists a self-billed invoice twice (385 and 394); 394 is read, both are written 389.
  { ubl: "389", ours: "394", meaning: "self-billed invoice", root: "Invoice" },
  { ubl: "389", ours: "385", meaning: "self-billed invoice", root: "Invoice" },
  { ubl: "261", ours: "393", meaning: "self-billed credit note", root: "CreditNote" },
  { ubl: "393", ours: "386", meaning: "factored invoice", root: "Invoice" },
  { ubl: "395", ours: "392", meaning: "consignment invoice", root: "Invoice" },
  { ubl: "325", ours: "390", meaning: "proforma invoice", root: "Invoice" },
];

/** UN/CEFACT 1001 codes EN 16931 allows that have no counterpart here, by meaning, for the refusal. */
const UNMATCHED_UBL: Record<string, string> = {
  "384": "corrected invoice",
  "385": "consolidated invoice",
  "386": "prepayment invoice",
  "326": "partial invoice",
  "388": "tax invoice",
  "390": "delcredere invoice",
  "396": "factored credit note",
  "532": "forwarder's credit note",
  "751": "invoice information for accounting purposes",
};

export function typeFromUbl(code: string): TypeCode | { refused: string } {
  const found = TYPE_CODES.find((t) => t.ubl === code);
  if (found) return found;
  const meaning = UNMATCHED_UBL[code];
  return {
    refused: `UN/CEFACT 1001 type code '${code}'${meaning ? ` (${meaning})` : ""} has no counterpart in the authority's invoice types; the codes read are ${TYPE_CODES.filter(
      (t, i, all) => all.findIndex((o) => o.ubl === t.ubl) === i,
    )
      .map((t) => `${t.ubl} (${t.meaning})`)
      .join(", ")}`,
  };
}

export function typeToUbl(ours: string): TypeCode | { refused: string } {
  return (
    TYPE_CODES.find((t) => t.ours === ours) ?? {
      refused: `invoice type ${ours} has no UBL Invoice or CreditNote counterpart (UN/CEFACT 1001): it is not an invoice, a credit note or a debit note`,
    }
  );
}

/**
 * UNCL 5305 to this API's tax categories. E and O are zero-rated here with their exemption reason
 * kept, O marked by its VATEX code, so that UBL out writes the letter that came in.
 */
export const VAT_CATEGORIES = [
  { ubl: "S", ours: "STANDARD_VAT", meaning: "standard rate" },
  { ubl: "Z", ours: "ZERO_VAT", meaning: "zero rated" },
  { ubl: "E", ours: "ZERO_VAT", meaning: "exempt from VAT", exempt: true },
  { ubl: "O", ours: "ZERO_VAT", meaning: "not subject to VAT", exempt: true, reasonCode: "VATEX-EU-O" },
] as const;

const UNMATCHED_VAT: Record<string, string> = {
  AE: "VAT reverse charge",
  K: "intra-community supply (EEA)",
  G: "free export item, VAT not charged",
  L: "Canary Islands general indirect tax",
  M: "tax for production, services and importation in Ceuta and Melilla",
  B: "transferred (VAT), Italy",
};

/** The VATEX code UBL out gives a category read from O, and that marks one as O. */
export const NOT_SUBJECT = "VATEX-EU-O";

export function vatFromUbl(letter: string): (typeof VAT_CATEGORIES)[number] | { refused: string } {
  const found = VAT_CATEGORIES.find((c) => c.ubl === letter);
  if (found) return found;
  const meaning = UNMATCHED_VAT[letter];
  return {
    refused: `VAT category '${letter}'${meaning ? ` (${meaning})` : ""} has no Nigerian counterpart; the categories read are S (standard rate), Z (zero rated), E (exempt) and O (not subject to VAT)`,
  };
}

/** This API's tax category to its UNCL 5305 letter; undefined for a tax that is not VAT. */
export function vatToUbl(category: {
  id: string;
  exemption_reason?: string;
  exemption_reason_code?: string;
}) {
  if (category.id === "STANDARD_VAT" || category.id === "REDUCED_VAT") return "S";
  if (category.id !== "ZERO_VAT") return undefined;
  if (category.exemption_reason_code === NOT_SUBJECT) return "O";
  return category.exemption_reason !== undefined || category.exemption_reason_code !== undefined ? "E" : "Z";
}
