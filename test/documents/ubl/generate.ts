/**
 * UBL 2.1 invoices and credit notes written the way ERPs write them, for round-trip and property
 * tests of a UBL reader: `generateUbl(seed, options)` gives a document and the facts a reader must
 * recover from it. The same seed and options give the same document, byte for byte.
 *
 * Every document is valid against the UBL 2.1 schemas and breaks no fatal EN 16931 rule; with the
 * Peppol BIS 3 customization it keeps the Peppol rules too. Its arithmetic is exact: amounts have
 * two decimals; a line's net is quantity × price ÷ base quantity − its allowances + its charges,
 * exactly (quantities and prices are chosen so); the VAT of a category is its taxable amount × rate
 * ÷ 100 rounded half away from zero to two decimals; the totals are the sums EN 16931 defines
 * (BR-CO-10 to BR-CO-16).
 *
 * What varies with the seed, unless an option fixes it: the way the XML is written (see `Style`),
 * invoice or credit note, currency, VAT categories, the parties and where their tax identifiers
 * sit, the lines (units, decimal quantities, base quantities, gross prices with a discount,
 * allowances and charges, HS codes), document allowances and charges, references, payment means,
 * a VAT total in naira for a dollar invoice, prepaid amounts and cash rounding.
 */
import fs from "node:fs";
import { parse } from "csv-parse/sync";
import { HS_CSV } from "../../helpers.ts";

// ---------------------------------------------------------------------------------------------
// Options and results

export type Kind = "Invoice" | "CreditNote";
/** UNCL 5305 VAT categories: standard rated, zero rated, exempt, not subject to VAT. */
export type Category = "S" | "Z" | "E" | "O";

export type Supplier = {
  /** The Nigerian TIN, e.g. `12345678-0001` (an `NG` prefix, if given, is not part of it). */
  tin: string;
  name: string;
  street?: string;
  city?: string;
  postalZone?: string;
  /** ISO 3166-2 code of the state, e.g. `NG-LA`. */
  state?: string;
  email?: string;
  telephone?: string;
};

/** How the namespaces are written. */
export type NamespaceStyle =
  /** `cbc:`/`cac:` prefixes declared on the root, the document's namespace the default (Odoo, Peppol). */
  | "default"
  /** every element prefixed, the root too: `inv:Invoice`, `ubl:Invoice`, `cn:CreditNote`. */
  | "prefixed"
  /** generated prefixes: `ns1`, `ns2`, `ns3` in some order (JAXB, .NET). */
  | "odd"
  /** the root declares only its own namespace; each of its children declares what its subtree uses,
   * with prefixes that differ from one subtree to another. */
  | "inner"
  /** no prefix at all: each element whose namespace is not its parent's redeclares the default. */
  | "unprefixed";

export const NAMESPACE_STYLES: readonly NamespaceStyle[] = [
  "default",
  "prefixed",
  "odd",
  "inner",
  "unprefixed",
];

export type Style = {
  namespaces: NamespaceStyle;
  /** The root's prefix under "prefixed". */
  rootPrefix: string;
  /** Indented on several lines, or all on one line. */
  pretty: boolean;
  indent: string;
  newline: "\n" | "\r\n";
  declaration: "none" | "plain" | "encoding" | "standalone";
  /** `cbc:UBLVersionID` 2.1 written. */
  ublVersion: boolean;
  /** `cbc:CustomizationID`: Peppol BIS 3 (with its ProfileID), plain EN 16931, or none (EN 16931
   * then fails BR-01: only when asked). */
  customization: "peppol" | "en16931" | "none";
  /** Comments before the root and here and there inside. */
  comments: boolean;
  /** Decimals printed: always two for amounts ("fixed"), no more than needed ("minimal"), or
   * either, value by value ("mixed"). Quantities, prices and rates follow the same choice. */
  numbers: "fixed" | "minimal" | "mixed";
  quote: '"' | "'";
  /** Unused namespace declarations (xsi, udt, ccts) and an xsi:schemaLocation on the root. */
  extraNamespaces: boolean;
  /** Notes and descriptions in CDATA sections. */
  cdata: boolean;
  /** Characters beyond ASCII written as character references. */
  charRefs: boolean;
  /** A `ext:UBLExtensions` block (foreign content, a `cbc:ID` of its own inside). */
  extensions: boolean;
};

export type GenerateOptions = {
  supplier: Supplier;
  /** The customer's Nigerian TIN; null: a customer without one; absent: by the seed (sometimes a
   * foreign customer). */
  customerTin?: string | null;
  kind?: Kind;
  /** Number of lines (at least one per category). */
  lines?: number;
  /** Any part of the style; the rest by the seed. */
  style?: Partial<Style>;
  /** The VAT categories used (each by at least one line). O cannot be mixed with others (BR-O-11). */
  categories?: Category[];
  /**
   * Where the supplier's TIN is written: "vat", `NG` + TIN as VAT identifier (TaxScheme VAT);
   * "tax", the bare TIN as tax registration identifier (TaxScheme TAX or TIN); "both". By the seed
   * when absent ("tax" under category O, which allows no VAT identifier). "bareVat", the bare TIN
   * under TaxScheme VAT, as some ERPs write it, only on request: EN 16931 refuses it (BR-CO-09, a
   * VAT identifier starts with a country code).
   */
  tinPlacement?: "vat" | "tax" | "both" | "bareVat";
  issueDate?: string;
  currency?: "NGN" | "USD";
  id?: string;
  /**
   * Only what this API's invoice document carries: every line a product with its HS code, no
   * prepaid or rounding amount. What it cannot carry is tested apart.
   */
  carriable?: boolean;
};

/**
 * Money amounts are decimal strings with exactly two decimals ("1234.50", "-90.00", "0.00").
 * Quantities, prices, base quantities and rates are decimal strings in their shortest form
 * ("2.5", "100", "0.125", "7.5", "0"): compare them as decimals, not as text.
 */
export type ExpectedAllowanceCharge = {
  amount: string;
  reasonCode: string | null;
  reason: string | null;
  /** The percentage (MultiplierFactorNumeric) and base amount, when given. */
  percentage: string | null;
  base: string | null;
};

export type ExpectedDocumentAllowanceCharge = ExpectedAllowanceCharge & {
  category: Category;
  /** The VAT rate; null for category O (it has none). */
  percent: string | null;
};

export type ExpectedLine = {
  id: string;
  /** Negative on a returned item's line. */
  quantity: string;
  unitCode: string;
  /** The net price, per `baseQuantity` units. */
  price: string;
  /** "1" when the document gives none. */
  baseQuantity: string;
  /** The gross price and the discount on it (Price/AllowanceCharge), when given. */
  grossPrice: string | null;
  priceDiscount: string | null;
  net: string;
  name: string;
  description: string | null;
  sellersItemId: string | null;
  /** HS 2022 subheading written `NNNN.NN`, and its description (the code's `name`); null for a service. */
  hsCode: string | null;
  hsName: string | null;
  category: Category;
  percent: string | null;
  allowances: ExpectedAllowanceCharge[];
  charges: ExpectedAllowanceCharge[];
};

export type ExpectedVat = {
  category: Category;
  percent: string | null;
  taxable: string;
  tax: string;
  exemptionReason: string | null;
  exemptionReasonCode: string | null;
};

export type Expected = {
  kind: Kind;
  typeCode: "380" | "381";
  id: string;
  issueDate: string;
  /** Invoice: cbc:DueDate; credit note (UBL 2.1 has no DueDate there): PaymentMeans/PaymentDueDate. */
  dueDate: string | null;
  currency: "NGN" | "USD";
  /** A second currency for the VAT total (TaxCurrencyCode), and that total in it. */
  taxCurrency: string | null;
  taxInTaxCurrency: string | null;
  customizationId: string | null;
  profileId: string | null;
  note: string | null;
  buyerReference: string | null;
  orderReference: string | null;
  accountingCost: string | null;
  /** The invoice a credit note corrects. */
  billingReference: { id: string; issueDate: string } | null;
  /** Without `NG`, wherever it is written (see `GenerateOptions.tinPlacement`), and then also as
   * seller identifier (PartyIdentification) when only a TAX scheme carries it. */
  supplierTin: string;
  supplierName: string;
  supplierState: string;
  /** Nigerian: the TIN without `NG` (written `NG` + TIN under TaxScheme VAT, or bare under TaxScheme
   * TAX or TIN); foreign: the VAT identifier as written; null: none given. */
  customerTin: string | null;
  customerName: string;
  customerCountry: string;
  paymentMeansCode: string | null;
  lines: ExpectedLine[];
  allowances: ExpectedDocumentAllowanceCharge[];
  charges: ExpectedDocumentAllowanceCharge[];
  /** One entry per category, in the document's order. */
  vat: ExpectedVat[];
  totals: {
    lineExtension: string;
    /** "0.00" when the document has none. */
    allowanceTotal: string;
    chargeTotal: string;
    taxExclusive: string;
    tax: string;
    taxInclusive: string;
    prepaid: string;
    rounding: string;
    payable: string;
  };
  style: Style;
};

// ---------------------------------------------------------------------------------------------
// Random numbers (mulberry32: small, fast, the same everywhere)

class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = (Math.imul(seed | 0, 0x9e3779b1) ^ 0x85ebca6b) >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer from min to max, both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  big(min: bigint, max: bigint): bigint {
    const span = max - min + 1n;
    // Two draws give 53 bits, plenty for the amounts here.
    const draw =
      BigInt(Math.floor(this.next() * 2 ** 26)) * 2n ** 27n + BigInt(Math.floor(this.next() * 2 ** 27));
    return min + (draw % span);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }
  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy;
  }
  digits(count: number): string {
    let text = "";
    for (let i = 0; i < count; i++) text += String(this.int(0, 9));
    return text;
  }
}

// ---------------------------------------------------------------------------------------------
// Exact decimals: a value is n / 10^s, n a bigint

type Dec = { n: bigint; s: number };

const pow10 = (k: number) => 10n ** BigInt(k);
const abs = (n: bigint) => (n < 0n ? -n : n);

function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [abs(a), abs(b)];
  while (y) [x, y] = [y, x % y];
  return x;
}

/** n ÷ d (d > 0) rounded half away from zero. */
function roundDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  const r = n % d;
  if (2n * abs(r) >= d) return q + (n < 0n ? -1n : 1n);
  return q;
}

/** The fewest decimals that write the value exactly. */
function neededDecimals({ n, s }: Dec): number {
  let decimals = s;
  let value = n;
  while (decimals > 0 && value % 10n === 0n) {
    value /= 10n;
    decimals--;
  }
  return decimals;
}

/** The value written with `decimals` digits after the point (no fewer than it needs). */
function fixed({ n, s }: Dec, decimals: number): string {
  let value = n;
  if (decimals >= s) value = n * pow10(decimals - s);
  else {
    const divisor = pow10(s - decimals);
    if (n % divisor !== 0n) throw new Error(`${n}e-${s} needs more than ${decimals} decimals`);
    value = n / divisor;
  }
  const negative = value < 0n;
  const digits = abs(value)
    .toString()
    .padStart(decimals + 1, "0");
  const text = decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  return negative ? `-${text}` : text;
}

const canonical = (d: Dec) => fixed(d, neededDecimals(d));
const money = (cents: bigint) => fixed({ n: cents, s: 2 }, 2);
const cents = (n: bigint): Dec => ({ n, s: 2 });

// ---------------------------------------------------------------------------------------------
// Reference data

const NS = {
  Invoice: "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
  CreditNote: "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2",
  cac: "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
  cbc: "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
  ext: "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2",
  erp: "urn:einvoice:test:erp-metadata",
} as const;

const PEPPOL_CUSTOMIZATION = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0";
const PEPPOL_PROFILE = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";
const EN16931_CUSTOMIZATION = "urn:cen.eu:en16931:2017";

const STATES: readonly { code: string; cities: readonly string[]; postal: string }[] = [
  { code: "NG-LA", cities: ["Ikeja", "Lekki", "Victoria Island", "Apapa", "Yaba", "Lagos"], postal: "1000" },
  { code: "NG-FC", cities: ["Abuja", "Garki", "Wuse", "Maitama"], postal: "9000" },
  { code: "NG-KN", cities: ["Kano"], postal: "7000" },
  { code: "NG-RI", cities: ["Port Harcourt", "Bonny"], postal: "5000" },
  { code: "NG-OY", cities: ["Ibadan", "Ògbómọ̀ṣọ́"], postal: "2000" },
  { code: "NG-EN", cities: ["Enugu", "Nsukka"], postal: "4000" },
  { code: "NG-KD", cities: ["Kaduna", "Zaria"], postal: "8000" },
  { code: "NG-ED", cities: ["Benin City"], postal: "3000" },
  { code: "NG-OG", cities: ["Abẹ́òkúta", "Ota", "Sagamu"], postal: "1100" },
  { code: "NG-AN", cities: ["Onitsha", "Awka", "Nnewi"], postal: "4200" },
  { code: "NG-AB", cities: ["Aba", "Umuahia"], postal: "4400" },
  { code: "NG-DE", cities: ["Warri", "Asaba"], postal: "3200" },
  { code: "NG-PL", cities: ["Jos"], postal: "9300" },
  { code: "NG-KW", cities: ["Ilorin"], postal: "2400" },
  { code: "NG-CR", cities: ["Calabar"], postal: "5400" },
  { code: "NG-AK", cities: ["Uyo"], postal: "5200" },
];

const STREETS = [
  "Adeola Odeku Street",
  "Kofo Abayomi Road",
  "Awolowo Way",
  "Aminu Kano Crescent",
  "Herbert Macaulay Way",
  "Ahmadu Bello Way",
  "Trans-Amadi Industrial Layout",
  "Lagos–Ibadan Expressway",
  "Murtala Mohammed Way",
  "Ogui Road",
  "Obafemi Awolowo Road",
];

const SUPPLIER_NAMES = [
  "Chisom Foods Ltd",
  "Adéwálé & Daughters Nig. Ltd",
  "Northern Agro Allied Plc",
  "Lagoon Tech Solutions Ltd",
  "Okonkwo Building Materials Ltd",
  "Sahel Logistics Ltd",
  "Bright Star Pharmaceuticals Ltd",
  "Èkó Office Supplies Ltd",
];

const CUSTOMER_NAMES = [
  "Zenon Retail Ltd",
  "Kanem Distribution Co.",
  "Harmattan Hotels Ltd",
  "Niger Delta Marine Services Ltd",
  "Ọ̀yọ́ Agro Processing Ltd",
  "Greenfield Schools Ltd",
  "Plateau Farms Ltd",
  "Atlantic Paints & Coatings Ltd",
  "Mama Nkechi's Supermarket",
];

type Foreign = {
  country: string;
  name: string;
  city: string;
  postal: string;
  vat: (rng: Rng) => string | null;
};
const FOREIGN_CUSTOMERS: readonly Foreign[] = [
  {
    country: "GB",
    name: "Thames Import Ltd",
    city: "London",
    postal: "EC1A 1BB",
    vat: (r) => `GB${r.digits(9)}`,
  },
  {
    country: "GH",
    name: "Accra Trading Co.",
    city: "Accra",
    postal: "GA-184",
    vat: (r) => `GHC${r.digits(10)}`,
  },
  { country: "US", name: "Houston Energy Supplies Inc.", city: "Houston", postal: "77002", vat: () => null },
  {
    country: "ZA",
    name: "Cape Foods (Pty) Ltd",
    city: "Cape Town",
    postal: "8001",
    vat: (r) => `ZA4${r.digits(9)}`,
  },
  {
    country: "FR",
    name: "Société Lyonnaise d’Import",
    city: "Lyon",
    postal: "69002",
    vat: (r) => `FR${r.digits(11)}`,
  },
];

/** UN/ECE recommendation 20 (and 21) units, with how their quantities look. */
type Unit = { code: string; decimals: number; min: number; max: number };
const COUNT = (code: string, max = 200): Unit => ({ code, decimals: 0, min: 1, max });
const MEASURE = (code: string, max: number): Unit => ({ code, decimals: 3, min: 1, max });
const TIME = (code: string, max: number): Unit => ({ code, decimals: 1, min: 1, max });

type Product = {
  name: string;
  hs: string | null;
  units: readonly Unit[];
  /** Price range per unit, in naira. */
  price: [number, number];
  /** Categories it plausibly falls in. */
  categories: readonly Category[];
  description?: string;
};

const PRODUCTS: readonly Product[] = [
  {
    name: "Rice, parboiled, 50kg bag",
    hs: "100630",
    units: [COUNT("XBG", 400), COUNT("C62")],
    price: [65000, 95000],
    categories: ["E", "S"],
  },
  {
    name: "Portland cement 42.5R, 50kg",
    hs: "252329",
    units: [COUNT("XBG", 2000)],
    price: [8500, 11000],
    categories: ["S"],
  },
  {
    name: "Granulated sugar 1kg",
    hs: "170199",
    units: [COUNT("XCT", 300), MEASURE("KGM", 5000)],
    price: [1200, 1900],
    categories: ["S", "E"],
  },
  {
    name: "Refined palm oil 25L",
    hs: "151190",
    units: [COUNT("C62"), MEASURE("LTR", 20000)],
    price: [38000, 52000],
    categories: ["S"],
  },
  {
    name: "Tomato paste 70g, carton of 50",
    hs: "200290",
    units: [COUNT("XCT", 500)],
    price: [14000, 19000],
    categories: ["S"],
  },
  {
    name: "Table water 75cl, pack of 12",
    hs: "220110",
    units: [COUNT("XPK", 1000)],
    price: [1500, 2600],
    categories: ["S"],
  },
  {
    name: "Laptop computer 14-inch, 16GB RAM",
    hs: "847130",
    units: [COUNT("C62", 40), COUNT("H87", 40)],
    price: [650000, 1450000],
    categories: ["S"],
    description: "Including 12 months warranty",
  },
  {
    name: "Smartphone 128GB",
    hs: "851713",
    units: [COUNT("H87", 60), COUNT("EA", 60)],
    price: [180000, 520000],
    categories: ["S"],
  },
  {
    name: "Automotive gas oil (diesel)",
    hs: "271019",
    units: [MEASURE("LTR", 33000)],
    price: [1100, 1650],
    categories: ["S", "Z"],
  },
  {
    name: "Premium motor spirit",
    hs: "271012",
    units: [MEASURE("LTR", 45000)],
    price: [620, 1030],
    categories: ["S", "Z"],
  },
  {
    name: "NPK fertiliser 15-15-15, 50kg",
    hs: "310520",
    units: [COUNT("XBG", 600)],
    price: [32000, 46000],
    categories: ["E"],
  },
  {
    name: "Paracetamol 500mg tablets, box of 100",
    hs: "300490",
    units: [COUNT("XBX", 900)],
    price: [900, 2400],
    categories: ["E"],
  },
  {
    name: "Exercise books, pack of 20",
    hs: "482020",
    units: [COUNT("XPK", 800)],
    price: [3500, 6000],
    categories: ["E", "S"],
  },
  {
    name: "Infant formula 400g",
    hs: "190110",
    units: [COUNT("EA", 300)],
    price: [7500, 14000],
    categories: ["E"],
  },
  {
    name: "Iron rods 12mm",
    hs: "721420",
    units: [MEASURE("TNE", 60), COUNT("C62", 2000)],
    price: [850000, 1150000],
    categories: ["S"],
  },
  {
    name: "PVC pipe 4in x 6m",
    hs: "391723",
    units: [COUNT("C62", 500)],
    price: [6500, 12000],
    categories: ["S"],
  },
  {
    name: "Emulsion paint 20L, white",
    hs: "320910",
    units: [COUNT("EA", 200)],
    price: [42000, 68000],
    categories: ["S"],
  },
  {
    name: "Diesel generator 20kVA",
    hs: "850211",
    units: [COUNT("SET", 5)],
    price: [5200000, 9800000],
    categories: ["S"],
    description: "Soundproof canopy, ATS panel",
  },
  {
    name: "Car tyres 205/55R16",
    hs: "401110",
    units: [COUNT("C62", 80)],
    price: [58000, 95000],
    categories: ["S"],
  },
  {
    name: "Frozen mackerel (titus), 20kg carton",
    hs: "030354",
    units: [COUNT("XCT", 600), MEASURE("KGM", 12000)],
    price: [38000, 64000],
    categories: ["E", "S"],
  },
  {
    name: "Maize, yellow",
    hs: "100590",
    units: [MEASURE("KGM", 30000), MEASURE("TNE", 40)],
    price: [450, 720],
    categories: ["E", "Z"],
  },
  {
    name: "Cocoa beans, dried",
    hs: "180100",
    units: [MEASURE("TNE", 25), MEASURE("KGM", 25000)],
    price: [5200, 9800],
    categories: ["Z"],
  },
  {
    name: "Sesame seeds, hulled",
    hs: "120740",
    units: [MEASURE("KGM", 20000)],
    price: [1400, 2100],
    categories: ["Z"],
  },
  {
    name: "Raw cashew nuts",
    hs: "080131",
    units: [MEASURE("KGM", 20000)],
    price: [900, 1500],
    categories: ["Z"],
  },
  {
    name: "Solar panel 400W mono",
    hs: "854143",
    units: [COUNT("C62", 200)],
    price: [95000, 160000],
    categories: ["E", "S"],
  },
  {
    name: "LED bulb 12W, box of 10",
    hs: "853952",
    units: [COUNT("XBX", 300)],
    price: [9000, 16000],
    categories: ["S"],
  },
  {
    name: "A4 copier paper 80gsm, ream",
    hs: "480256",
    units: [COUNT("RM", 500), COUNT("XBX", 100)],
    price: [6500, 9500],
    categories: ["S"],
  },
  {
    name: "Toner cartridge, black",
    hs: "844399",
    units: [COUNT("EA", 50)],
    price: [38000, 85000],
    categories: ["S"],
  },
  {
    name: "Wheat flour 50kg",
    hs: "110100",
    units: [COUNT("XBG", 500)],
    price: [52000, 78000],
    categories: ["E", "S"],
  },
  {
    name: "Spaghetti 500g, carton of 20",
    hs: "190230",
    units: [COUNT("XCT", 400)],
    price: [13000, 19500],
    categories: ["S"],
  },
  {
    name: "Bar soap 200g, carton of 36",
    hs: "340111",
    units: [COUNT("XCT", 300)],
    price: [16000, 24000],
    categories: ["S"],
  },
  {
    name: "Lager beer 60cl, crate of 12",
    hs: "220300",
    units: [COUNT("C62", 300)],
    price: [7800, 12500],
    categories: ["S"],
  },
  {
    name: "Granite chippings 3/4in",
    hs: "251710",
    units: [MEASURE("TNE", 120)],
    price: [18000, 32000],
    categories: ["S"],
  },
  {
    name: "Seasoning cubes, carton",
    hs: "210390",
    units: [COUNT("XCT", 400)],
    price: [21000, 34000],
    categories: ["S"],
  },
];

const SERVICES: readonly Product[] = [
  {
    name: "Consulting services",
    hs: null,
    units: [TIME("HUR", 160)],
    price: [25000, 90000],
    categories: ["S", "O"],
  },
  {
    name: "Installation and commissioning",
    hs: null,
    units: [TIME("HUR", 80), COUNT("C62", 3)],
    price: [35000, 250000],
    categories: ["S"],
  },
  {
    name: "Haulage, Lagos to Kano",
    hs: null,
    units: [COUNT("C62", 12)],
    price: [850000, 1600000],
    categories: ["S"],
  },
  {
    name: "Software subscription",
    hs: null,
    units: [COUNT("MON", 12)],
    price: [45000, 380000],
    categories: ["S", "O"],
    description: "Monthly licence, 25 users",
  },
  {
    name: "Staff training",
    hs: null,
    units: [TIME("DAY", 10)],
    price: [150000, 450000],
    categories: ["E", "S", "O"],
  },
];

const ALLOWANCE_REASONS: readonly [string, string][] = [
  ["95", "Discount"],
  ["100", "Special rebate"],
  ["64", "Special agreement"],
  ["66", "New outlet discount"],
  ["104", "Standard"],
  ["105", "Yearly turnover"],
];
const CHARGE_REASONS: readonly [string, string][] = [
  ["FC", "Freight service"],
  ["SAA", "Shipping and handling"],
  ["ABL", "Additional packaging"],
  ["PC", "Packing"],
  ["AAT", "Rush delivery"],
  ["ABK", "Miscellaneous"],
];
const EXEMPTIONS = [
  "Exempt supply: basic food items (VAT Act, First Schedule)",
  "Exempt: medical and pharmaceutical products",
  "Exempt: educational books and materials",
  "Exempt: baby products",
  "Exempt: fertiliser, agricultural and veterinary medicine",
];
const EXEMPTION_CODES = ["VATEX-EU-132", "VATEX-EU-143", "VATEX-EU-148"];
const NOT_SUBJECT = ["Not subject to VAT", "Outside the scope of VAT", "Supply not subject to Nigerian VAT"];
const PAYMENT_MEANS: readonly [string, string][] = [
  ["30", "Credit transfer"],
  ["30", "Credit transfer"],
  ["31", "Debit transfer"],
  ["42", "Payment to bank account"],
  ["42", "Payment to bank account"],
  ["48", "Bank card"],
  ["58", "SEPA credit transfer"],
  ["10", "In cash"],
  ["20", "Cheque"],
];
const BANKS: readonly [string, string][] = [
  ["058", "Guaranty Trust Bank"],
  ["044", "Access Bank"],
  ["057", "Zenith Bank"],
  ["011", "First Bank of Nigeria"],
  ["033", "United Bank for Africa"],
];

type HsRow = { code: string; description: string };
let hsRows: HsRow[] | undefined;
let hsByCode: Map<string, string> | undefined;

/** The HS 2022 subheadings (six digits), from the shared nomenclature. */
function hsSubheadings(): HsRow[] {
  if (!hsRows) {
    const rows = parse(fs.readFileSync(HS_CSV), { columns: true, skip_empty_lines: true }) as {
      hscode: string;
      description: string;
      level: string;
    }[];
    hsRows = rows
      .filter((row) => row.level === "6" && /^\d{6}$/.test(row.hscode))
      .map((row) => ({ code: row.hscode, description: row.description }));
    hsByCode = new Map(hsRows.map((row) => [row.code, row.description]));
  }
  return hsRows;
}

function hsDescription(code: string): string {
  hsSubheadings();
  const description = hsByCode?.get(code);
  if (description === undefined) throw new Error(`HS ${code} is not in ${HS_CSV}`);
  return description;
}

const hsWritten = (code: string) => `${code.slice(0, 4)}.${code.slice(4)}`;

// ---------------------------------------------------------------------------------------------
// Dates

function addDays(date: string, days: number): string {
  const time = Date.parse(`${date}T00:00:00Z`) + days * 86_400_000;
  return new Date(time).toISOString().slice(0, 10);
}

function randomDate(rng: Rng): string {
  return addDays("2025-01-01", rng.int(0, 729));
}

// ---------------------------------------------------------------------------------------------
// Identifiers

/** A GS1 number (GLN, GTIN) with its check digit. */
function gs1(rng: Rng, prefix: string, length: number): string {
  const body = prefix + rng.digits(length - 1 - prefix.length);
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    const digit = Number(body[body.length - 1 - i]);
    sum += digit * (i % 2 === 0 ? 3 : 1);
  }
  return body + String((10 - (sum % 10)) % 10);
}

export function randomTin(rng: Rng | number): string {
  const r = typeof rng === "number" ? new Rng(rng) : rng;
  return `${r.digits(8)}-${r.pick(["0001", "0001", "0001", "0002", "0003"])}`;
}

function invoiceNumber(rng: Rng, kind: Kind, date: string): string {
  const year = date.slice(0, 4);
  const n = rng.int(1, 99999);
  const pad = (width: number) => String(n % 10 ** width).padStart(width, "0");
  if (kind === "CreditNote") {
    return rng.pick([
      () => `RINV/${year}/${pad(5)}`,
      () => `CN-${pad(4)}`,
      () => `AV${year}-${pad(4)}`,
      () => `CRN/${year}/${pad(4)}`,
      () => `SCN${pad(6)}`,
    ])();
  }
  return rng.pick([
    () => `INV/${year}/${pad(5)}`,
    () => `SO-${pad(4)}`,
    () => `F${year}-${pad(4)}`,
    () => `INV-${pad(6)}`,
    () => `${year}/NG/${pad(6)}`,
    () => `BILL-${date.replaceAll("-", "")}-${pad(2)}`,
    () => `SI${year.slice(2)}${pad(5)}`,
    () => `9${pad(7)}`,
  ])();
}

function slug(name: string): string {
  return (
    name
      .normalize("NFD")
      .replace(/[^\x20-\x7e]/g, "")
      .toLowerCase()
      .replace(/\b(ltd|plc|nig|co|inc|pty)\b/g, "")
      .replace(/[^a-z0-9]+/g, "")
      .slice(0, 18) || "company"
  );
}

function telephone(rng: Rng): string {
  const network = rng.pick([
    "803",
    "805",
    "806",
    "807",
    "808",
    "809",
    "810",
    "813",
    "816",
    "703",
    "706",
    "902",
  ]);
  const rest = rng.digits(7);
  return rng.pick([
    `+234 ${network} ${rest.slice(0, 3)} ${rest.slice(3)}`,
    `0${network}${rest}`,
    `+234${network}${rest}`,
    `0${network} ${rest.slice(0, 3)} ${rest.slice(3)}`,
  ]);
}

/** A supplier varied by the seed, for callers that need one. */
export function randomSupplier(seed: number): Supplier {
  const rng = new Rng(seed ^ 0x5bd1e995);
  const name = rng.pick(SUPPLIER_NAMES);
  const state = rng.pick(STATES);
  return {
    tin: randomTin(rng),
    name,
    street: `${rng.int(1, 250)} ${rng.pick(STREETS)}`,
    city: rng.pick(state.cities),
    postalZone: `${state.postal}${rng.digits(2)}`,
    state: state.code,
    email: `accounts@${slug(name)}.com.ng`,
    telephone: telephone(rng),
  };
}

// ---------------------------------------------------------------------------------------------
// The XML tree, and how it is written

type Ns = "doc" | "cac" | "cbc" | "ext" | "erp";
type El = {
  ns: Ns;
  name: string;
  attrs: [string, string][];
  kids: Kid[];
  text?: string;
  cdata?: boolean;
};
type Kid = El | { comment: string };

const isEl = (kid: Kid): kid is El => "name" in kid;
/** A child or nothing: builders write `condition && element`. */
type MaybeKid = Kid | null | undefined | false | "";

function el(ns: Ns, name: string, kids: MaybeKid[], attrs: [string, string][] = []): El {
  return { ns, name, attrs, kids: kids.filter((kid): kid is Kid => Boolean(kid)) };
}
function leaf(ns: Ns, name: string, text: string, attrs: [string, string][] = [], cdata = false): El {
  if (text.trim() === "") throw new Error(`empty ${name}`);
  return { ns, name, attrs, kids: [], text, cdata };
}
const cac = (name: string, kids: MaybeKid[]) => el("cac", name, kids);
const cbc = (name: string, text: string, attrs: [string, string][] = []) => leaf("cbc", name, text, attrs);

function escapeText(text: string, style: Style): string {
  const escaped = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return style.charRefs ? toCharRefs(escaped) : escaped;
}
function escapeAttr(text: string, style: Style): string {
  const escaped = text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(style.quote === '"' ? /"/g : /'/g, style.quote === '"' ? "&quot;" : "&apos;")
    .replace(/\t/g, "&#9;")
    .replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;");
  return style.charRefs ? toCharRefs(escaped) : escaped;
}
function toCharRefs(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    out += code > 0x7e ? `&#x${code.toString(16).toUpperCase()};` : char;
  }
  return out;
}

function namespacesUsed(node: El, into = new Set<Ns>()): Set<Ns> {
  if (node.ns !== "erp") into.add(node.ns);
  for (const kid of node.kids) if (isEl(kid) && kid.ns !== "erp") namespacesUsed(kid, into);
  return into;
}

type Scope = { prefixes: Map<string, string>; defaultNs: string };

function serialize(root: El, kind: Kind, style: Style, rng: Rng): string {
  const uri = (ns: Ns) => (ns === "doc" ? NS[kind] : NS[ns]);
  const nl = style.pretty ? style.newline : "";
  const q = style.quote;

  // The prefix each namespace gets: fixed for the document, or per subtree under "inner".
  const fixedPrefixes: Record<Ns, string> = { doc: "", cac: "cac", cbc: "cbc", ext: "ext", erp: "erp" };
  if (style.namespaces === "prefixed") fixedPrefixes.doc = style.rootPrefix;
  if (style.namespaces === "odd") {
    const [a, b, c] = rng.shuffle(["ns1", "ns2", "ns3"]);
    Object.assign(fixedPrefixes, { doc: a, cac: b, cbc: c, ext: "ns4" });
  }

  const out: string[] = [];
  const write = (
    node: El,
    depth: number,
    scope: Scope,
    prefixes: Record<Ns, string>,
    declareAll: boolean,
  ) => {
    const pad = style.pretty ? style.indent.repeat(depth) : "";
    let local = prefixes;
    let forced: Ns[] = [];
    if (style.namespaces === "inner" && depth === 1 && node.ns !== "doc") {
      // Each child of the root declares, on itself, what its subtree uses, with prefixes of its own.
      const pair = rng.pick([
        ["cac", "cbc"],
        ["cac", "cbc"],
        ["cac", "cbc"],
        ["a", "b"],
        ["ac", "bc"],
        ["agg", "basic"],
      ]);
      local = { ...prefixes, cac: pair[0] as string, cbc: pair[1] as string, ext: rng.pick(["ext", "x"]) };
      forced = [...namespacesUsed(node)];
    } else if (declareAll) {
      forced = [...namespacesUsed(node)];
    }
    const prefixes2 = new Map(scope.prefixes);
    let defaultNs = scope.defaultNs;
    const declarations: string[] = [];
    const declare = (ns: Ns) => {
      const prefix = style.namespaces === "unprefixed" ? "" : local[ns];
      if (prefix === "") {
        if (defaultNs !== uri(ns)) {
          declarations.push(` xmlns=${q}${uri(ns)}${q}`);
          defaultNs = uri(ns);
        }
      } else if (prefixes2.get(prefix) !== uri(ns)) {
        declarations.push(` xmlns:${prefix}=${q}${uri(ns)}${q}`);
        prefixes2.set(prefix, uri(ns));
      }
    };
    const own = node.ns;
    // The element's own namespace first (the usual order), then the rest.
    for (const ns of [own, ...forced.filter((ns) => ns !== own)]) declare(ns);
    const prefix = style.namespaces === "unprefixed" ? "" : local[own];
    const tag = prefix ? `${prefix}:${node.name}` : node.name;
    let attrs = declarations.join("");
    if (depth === 0 && style.extraNamespaces) {
      const schema = kind === "Invoice" ? "UBL-Invoice-2.1.xsd" : "UBL-CreditNote-2.1.xsd";
      attrs += ` xmlns:xsi=${q}http://www.w3.org/2001/XMLSchema-instance${q}`;
      attrs += ` xmlns:udt=${q}urn:oasis:names:specification:ubl:schema:xsd:UnqualifiedDataTypes-2${q}`;
      attrs += ` xmlns:ccts=${q}urn:un:unece:uncefact:documentation:2${q}`;
      attrs += ` xsi:schemaLocation=${q}${uri("doc")} ${schema}${q}`;
    }
    for (const [name, value] of node.attrs) attrs += ` ${name}=${q}${escapeAttr(value, style)}${q}`;
    if (node.text !== undefined) {
      const body =
        node.cdata && style.cdata && !node.text.includes("]]>")
          ? `<![CDATA[${node.text}]]>`
          : escapeText(node.text, style);
      out.push(`${pad}<${tag}${attrs}>${body}</${tag}>${nl}`);
      return;
    }
    out.push(`${pad}<${tag}${attrs}>${nl}`);
    const inner: Scope = { prefixes: prefixes2, defaultNs };
    for (const kid of node.kids) {
      if (isEl(kid)) {
        if (kid.ns === "erp") writeForeign(kid, depth + 1);
        else write(kid, depth + 1, inner, local, false);
      } else out.push(`${style.pretty ? style.indent.repeat(depth + 1) : ""}<!--${kid.comment}-->${nl}`);
    }
    out.push(`${pad}</${tag}>${nl}`);
  };
  // Foreign content (in an extension) declares its namespace on its top element.
  const writeForeign = (node: El, depth: number, top = true) => {
    const pad = style.pretty ? style.indent.repeat(depth) : "";
    const declaration = top ? ` xmlns:erp=${q}${NS.erp}${q}` : "";
    if (node.text !== undefined) {
      out.push(
        `${pad}<erp:${node.name}${declaration}>${escapeText(node.text, style)}</erp:${node.name}>${nl}`,
      );
      return;
    }
    out.push(`${pad}<erp:${node.name}${declaration}>${nl}`);
    for (const kid of node.kids) {
      if (!isEl(kid)) continue;
      if (kid.ns === "erp") writeForeign(kid, depth + 1, false);
      else {
        // A UBL element inside foreign content: declared on the spot.
        const kidPad = style.pretty ? style.indent.repeat(depth + 1) : "";
        out.push(
          `${kidPad}<u:${kid.name} xmlns:u=${q}${uri(kid.ns)}${q}>${escapeText(kid.text ?? "", style)}</u:${kid.name}>${nl}`,
        );
      }
    }
    out.push(`${pad}</erp:${node.name}>${nl}`);
  };

  const declaration = {
    none: "",
    plain: `<?xml version=${q}1.0${q}?>`,
    encoding: `<?xml version=${q}1.0${q} encoding=${q}${rng.pick(["UTF-8", "utf-8"])}${q}?>`,
    standalone: `<?xml version=${q}1.0${q} encoding=${q}UTF-8${q} standalone=${q}yes${q}?>`,
  }[style.declaration];
  let head = declaration ? declaration + (style.pretty || rng.chance(0.5) ? style.newline : "") : "";
  if (style.comments) {
    head += `<!--${rng.pick([" Generated by Odoo ", " Sage 300 e-invoice export ", " ERP export v4.2 ", "UBL 2.1"])}-->`;
    head += style.pretty ? style.newline : "";
  }
  const declareAllOnRoot = style.namespaces !== "inner" && style.namespaces !== "unprefixed";
  write(
    root,
    0,
    { prefixes: new Map([["xml", "http://www.w3.org/XML/1998/namespace"]]), defaultNs: "" },
    fixedPrefixes,
    declareAllOnRoot,
  );
  return head + out.join("");
}

// ---------------------------------------------------------------------------------------------
// The document

type AllowanceCharge = {
  charge: boolean;
  amount: bigint;
  reasonCode: string | null;
  reason: string | null;
  percentage: Dec | null;
  base: bigint | null;
};
type DocAllowanceCharge = AllowanceCharge & { category: Category };

type Line = {
  id: string;
  product: Product;
  unit: Unit;
  quantity: Dec;
  price: Dec;
  baseQuantity: bigint;
  baseQuantityWritten: "none" | "plain" | "unit";
  grossPrice: Dec | null;
  discount: Dec | null;
  allowances: AllowanceCharge[];
  charges: AllowanceCharge[];
  net: bigint;
  category: Category;
  hsCode: string | null;
  hsName: string | null;
  description: string | null;
  sellersItemId: string | null;
  gtin: string | null;
  origin: string | null;
  note: string | null;
  property: [string, string] | null;
};

const RATES: Record<Category, Dec | null> = {
  S: { n: 75n, s: 1 },
  Z: { n: 0n, s: 0 },
  E: { n: 0n, s: 0 },
  O: null,
};

function resolveStyle(rng: Rng, kind: Kind, given: Partial<Style> | undefined): Style {
  const namespaces = rng.pick(NAMESPACE_STYLES);
  const pretty = rng.chance(0.65);
  const style: Style = {
    namespaces,
    rootPrefix: kind === "Invoice" ? rng.pick(["inv", "ubl"]) : rng.pick(["cn", "ubl"]),
    pretty,
    indent: rng.pick(["  ", "  ", "    ", "\t"]),
    newline: rng.chance(0.15) ? "\r\n" : "\n",
    declaration: rng.pick(["encoding", "encoding", "plain", "standalone", "none"]),
    ublVersion: rng.chance(0.5),
    customization: rng.chance(0.55) ? "peppol" : "en16931",
    comments: rng.chance(0.3),
    numbers: rng.pick(["fixed", "fixed", "minimal", "mixed"]),
    quote: rng.chance(0.85) ? '"' : "'",
    extraNamespaces: rng.chance(0.2),
    cdata: rng.chance(0.15),
    charRefs: rng.chance(0.1),
    extensions: rng.chance(0.1),
  };
  return { ...style, ...given };
}

function pickCategories(rng: Rng, notSubjectAllowed: boolean): Category[] {
  const choices: Category[][] = [
    ["S"],
    ["S"],
    ["S"],
    ["S"],
    ["S", "Z"],
    ["S", "E"],
    ["S", "Z", "E"],
    ["Z"],
    ["E"],
  ];
  return rng.pick(notSubjectAllowed ? [...choices, ["O"]] : choices);
}

/**
 * A quantity and a net price whose product (÷ base quantity) is exact in cents: the price is a
 * multiple of what the quantity's decimals and the base quantity leave over.
 */
function quantityAndPrice(
  rng: Rng,
  unit: Unit,
  unitPrice: number,
  baseQuantity: bigint,
): { quantity: Dec; price: Dec } {
  for (;;) {
    const qs = unit.decimals === 0 ? 0 : rng.pick([0, 0, 1, 2, 3].filter((d) => d <= unit.decimals));
    const whole = rng.chance(0.6) ? rng.int(unit.min, Math.min(unit.max, 20)) : rng.int(unit.min, unit.max);
    const quantity: Dec = {
      n: BigInt(whole) * pow10(qs) + (qs ? BigInt(rng.int(0, 10 ** qs - 1)) : 0n),
      s: qs,
    };
    if (quantity.n === 0n) continue;
    const ps = rng.pick([2, 2, 2, 2, 2, 2, 0, 3, 4]);
    // net cents = quantity.n × price.n × 100 / (10^qs × 10^ps × baseQuantity)
    const denominator = pow10(qs + ps) * baseQuantity;
    const step = denominator / gcd(denominator, quantity.n * 100n);
    const target = BigInt(Math.max(1, Math.round(unitPrice * Number(baseQuantity) * 10 ** ps)));
    const multiple = target / step;
    if (multiple < 1n || step > pow10(ps + 3)) continue;
    return { quantity, price: { n: multiple * step, s: ps } };
  }
}

function percentageOf(rng: Rng, base: bigint): { percentage: Dec; amount: bigint } {
  const percentage = rng.pick<Dec>([
    { n: 2n, s: 0 },
    { n: 25n, s: 1 },
    { n: 5n, s: 0 },
    { n: 10n, s: 0 },
    { n: 125n, s: 1 },
    { n: 15n, s: 0 },
  ]);
  // amount = base × percentage ÷ 100, rounded to cents (Peppol allows 0.02 either way).
  const amount = roundDiv(base * percentage.n, 100n * pow10(percentage.s));
  return { percentage, amount };
}

function allowanceOrCharge(
  rng: Rng,
  charge: boolean,
  base: bigint,
  maxShare: number,
): AllowanceCharge | null {
  if (base <= 100n) return null;
  const [code, text] = rng.pick(charge ? CHARGE_REASONS : ALLOWANCE_REASONS);
  const written = rng.pick(["both", "both", "code", "reason"]);
  const reasonCode = written === "reason" ? null : code;
  const reason = written === "code" ? null : text;
  if (rng.chance(0.4)) {
    const { percentage, amount } = percentageOf(rng, base);
    if (amount <= 0n) return null;
    return { charge, amount, reasonCode, reason, percentage, base };
  }
  const max = BigInt(Math.floor(Number(base) * maxShare));
  if (max < 100n) return null;
  let amount = rng.big(100n, max);
  if (rng.chance(0.5)) amount -= amount % 100n; // whole naira or dollars
  if (amount <= 0n) return null;
  return { charge, amount, reasonCode, reason, percentage: null, base: null };
}

/** A UBL 2.1 document and what a reader must find in it. */
export function generateUbl(seed: number, opts: GenerateOptions): { xml: string; expected: Expected } {
  const rng = new Rng(seed);
  const kind: Kind = opts.kind ?? (rng.chance(0.25) ? "CreditNote" : "Invoice");
  const style = resolveStyle(rng, kind, opts.style);
  const currency = opts.currency ?? (rng.chance(0.85) ? "NGN" : "USD");
  const naira = currency === "NGN";
  const vatIdentifierAsked = opts.tinPlacement !== undefined && opts.tinPlacement !== "tax";
  const categories: Category[] = [...new Set(opts.categories ?? pickCategories(rng, !vatIdentifierAsked))];
  if (categories.length === 0) throw new Error("no VAT category");
  if (categories.includes("O") && categories.length > 1) {
    throw new Error("EN 16931 allows category O (not subject to VAT) only alone (BR-O-11 to BR-O-14)");
  }
  if (categories.includes("O") && vatIdentifierAsked) {
    throw new Error("EN 16931 allows no VAT identifier with category O (not subject to VAT, BR-O-02)");
  }
  const notSubject = categories[0] === "O";
  const issueDate = opts.issueDate ?? randomDate(rng);
  const id = opts.id ?? invoiceNumber(rng, kind, issueDate);
  const peppol = style.customization === "peppol";

  // Parties ------------------------------------------------------------------------------------
  const supplierTin = opts.supplier.tin.replace(/^NG/i, "");
  const supplierState = STATES.find((state) => state.code === opts.supplier.state) ?? rng.pick(STATES);
  const supplier = {
    name: opts.supplier.name,
    street: opts.supplier.street ?? `${rng.int(1, 250)} ${rng.pick(STREETS)}`,
    city: opts.supplier.city ?? rng.pick(supplierState.cities),
    postalZone: opts.supplier.postalZone ?? `${supplierState.postal}${rng.digits(2)}`,
    state: opts.supplier.state ?? supplierState.code,
    email: opts.supplier.email ?? `accounts@${slug(opts.supplier.name)}.com.ng`,
    telephone: opts.supplier.telephone ?? telephone(rng),
  };
  // Where the TIN goes. A VAT identifier (TaxScheme VAT) must start with a country code (BR-CO-09),
  // so the bare TIN is a tax registration identifier (TaxScheme other than VAT, BT-32); category O
  // allows no VAT identifier at all (BR-O-02).
  const supplierTinAs: "vat" | "tax" | "both" | "bareVat" =
    opts.tinPlacement ?? (notSubject ? "tax" : rng.pick(["vat", "vat", "vat", "tax", "both"]));
  const taxSchemeName = rng.pick(["TAX", "TAX", "TIN"]);
  // The seller needs a VAT identifier, a seller identifier or a legal registration identifier
  // (BR-CO-26): without the first, the TIN is also the seller identifier, or the RC number is given.
  const supplierIdentification = supplierTinAs === "tax" && rng.chance(0.5);
  const supplierRegistration =
    (supplierTinAs === "tax" && !supplierIdentification) || rng.chance(0.4)
      ? rng.pick([`RC${rng.digits(6)}`, `RC ${rng.digits(7)}`, `BN${rng.digits(7)}`])
      : null;

  const foreign = opts.customerTin === undefined && rng.chance(0.15) ? rng.pick(FOREIGN_CUSTOMERS) : null;
  const customerState = rng.pick(STATES);
  let customerTin: string | null;
  if (opts.customerTin !== undefined) customerTin = opts.customerTin?.replace(/^NG/i, "") ?? null;
  else if (foreign) customerTin = notSubject ? null : foreign.vat(rng);
  else customerTin = rng.chance(0.75) ? randomTin(rng) : null;
  const customerTinAs: "vat" | "tax" = foreign ? "vat" : notSubject ? "tax" : rng.pick(["vat", "vat", "tax"]);
  const customerName = foreign?.name ?? rng.pick(CUSTOMER_NAMES);
  const customerCountry = foreign?.country ?? "NG";

  // Lines --------------------------------------------------------------------------------------
  const lineCount = Math.max(
    opts.lines ?? (rng.chance(0.08) ? rng.int(31, 80) : rng.chance(0.2) ? rng.int(11, 30) : rng.int(1, 10)),
    categories.length,
  );
  const lineCategories = [...rng.shuffle(categories)];
  while (lineCategories.length < lineCount) lineCategories.push(rng.pick(categories));
  const lineIdStep = rng.pick([1, 1, 1, 10]);
  const rate = (usd: number) => (naira ? usd : usd / 1500);
  const lines: Line[] = [];
  for (let i = 0; i < lineCount; i++) {
    const category = lineCategories[i] as Category;
    const fits = (product: Product) => product.categories.includes(category);
    const pool = rng.chance(0.08) && !opts.carriable ? SERVICES : PRODUCTS;
    const candidates = pool.filter(fits);
    const fromCsv = pool === PRODUCTS && rng.chance(0.35);
    const product: Product = fromCsv
      ? (() => {
          const row = rng.pick(hsSubheadings());
          const name = (row.description.split(";")[1] ?? row.description).trim();
          return {
            name: name.charAt(0).toUpperCase() + name.slice(1, 80).trim(),
            hs: row.code,
            units: [COUNT("C62"), COUNT("EA"), MEASURE("KGM", 5000)],
            price: [500, 250000],
            categories: [category],
          };
        })()
      : rng.pick(candidates.length > 0 ? candidates : PRODUCTS);
    const unit = rng.pick(product.units);
    const baseQuantity = rng.chance(0.12) ? rng.pick([10n, 12n, 100n, 1000n]) : 1n;
    const unitPrice = rate(product.price[0] + rng.next() * (product.price[1] - product.price[0]));
    const { quantity, price } = quantityAndPrice(rng, unit, unitPrice, baseQuantity);
    const gross = (quantity.n * price.n * 100n) / (pow10(quantity.s + price.s) * baseQuantity);
    let grossPrice: Dec | null = null;
    let discount: Dec | null = null;
    if (rng.chance(0.1) && price.n > 10n) {
      discount = { n: rng.big(1n, price.n / 5n + 1n), s: price.s };
      grossPrice = { n: price.n + discount.n, s: price.s };
    }
    const allowances: AllowanceCharge[] = [];
    const charges: AllowanceCharge[] = [];
    if (rng.chance(0.15)) {
      const allowance = allowanceOrCharge(rng, false, gross, 0.25);
      if (allowance) allowances.push(allowance);
    }
    if (rng.chance(0.08)) {
      const charge = allowanceOrCharge(rng, true, gross, 0.1);
      if (charge) charges.push(charge);
    }
    const net =
      gross -
      allowances.reduce((sum, a) => sum + a.amount, 0n) +
      charges.reduce((sum, c) => sum + c.amount, 0n);
    const hsCode = product.hs && (rng.chance(0.95) || opts.carriable) ? product.hs : null;
    lines.push({
      id: String((i + 1) * lineIdStep),
      product,
      unit,
      quantity,
      price,
      baseQuantity,
      baseQuantityWritten:
        baseQuantity !== 1n
          ? rng.pick(["plain", "unit"])
          : rng.pick(["none", "none", "none", "plain", "unit"]),
      grossPrice,
      discount,
      allowances,
      charges,
      net,
      category,
      hsCode,
      hsName: hsCode ? hsDescription(hsCode) : null,
      description: product.description ?? (rng.chance(0.3) ? `${product.name} (${unit.code})` : null),
      sellersItemId: rng.chance(0.6)
        ? rng.pick([`SKU-${rng.digits(5)}`, `${rng.digits(6)}`, `P/${rng.digits(4)}`])
        : null,
      gtin: product.hs && rng.chance(0.15) ? gs1(rng, "615", 13) : null,
      origin: product.hs && rng.chance(0.15) ? rng.pick(["NG", "NG", "CN", "IN", "TR"]) : null,
      note: rng.chance(0.05)
        ? rng.pick(["Delivered to site", "Backorder from last month", "Promo pack"])
        : null,
      property: rng.chance(0.05)
        ? rng.pick<[string, string]>([
            ["Colour", "White"],
            ["Batch", `B${issueDate.slice(0, 4)}-${rng.digits(3)}`],
            ["Grade", "A"],
          ])
        : null,
    });
  }
  // Now and then an invoice takes back items of an earlier line: a negative quantity, as returns
  // are written, never more than that line's net.
  if (kind === "Invoice" && lines.length >= 2 && rng.chance(0.08)) {
    const earlier = lines.find(
      (line) => line.quantity.s === 0 && line.quantity.n >= 2n && line.baseQuantity === 1n,
    );
    if (earlier) {
      const back = rng.big(1n, earlier.quantity.n - 1n);
      const exact = (back * earlier.price.n * 100n) % pow10(earlier.price.s) === 0n;
      const net = -(back * earlier.price.n * 100n) / pow10(earlier.price.s);
      if (exact && -net < earlier.net) {
        lines.push({
          ...earlier,
          id: String((lines.length + 1) * lineIdStep),
          quantity: { n: -back, s: 0 },
          baseQuantityWritten: "none",
          grossPrice: null,
          discount: null,
          allowances: [],
          charges: [],
          net,
          note: "Returned goods",
          description: earlier.description,
          property: null,
        });
      }
    }
  }

  // Document allowances and charges --------------------------------------------------------------
  const lineSum = (category: Category) =>
    lines.filter((line) => line.category === category).reduce((sum, line) => sum + line.net, 0n);
  const docAllowances: DocAllowanceCharge[] = [];
  const docCharges: DocAllowanceCharge[] = [];
  if (rng.chance(0.25)) {
    for (const category of rng.shuffle(categories).slice(0, rng.int(1, 2))) {
      const allowance = allowanceOrCharge(rng, false, lineSum(category), 0.1);
      if (allowance) docAllowances.push({ ...allowance, category });
    }
  }
  if (rng.chance(0.2)) {
    const category = categories.includes("S") && rng.chance(0.8) ? "S" : rng.pick(categories);
    const charge = allowanceOrCharge(rng, true, lineSum(category), 0.08);
    if (charge) docCharges.push({ ...charge, category });
  }

  // VAT breakdown and totals -------------------------------------------------------------------
  const order: Category[] = (["S", "Z", "E", "O"] as const).filter((category) =>
    categories.includes(category),
  );
  const vat = order.map((category) => {
    const taxable =
      lineSum(category) +
      docCharges.filter((c) => c.category === category).reduce((sum, c) => sum + c.amount, 0n) -
      docAllowances.filter((a) => a.category === category).reduce((sum, a) => sum + a.amount, 0n);
    const percent = RATES[category];
    const tax = percent ? roundDiv(taxable * percent.n, 100n * pow10(percent.s)) : 0n;
    const exemptionReason =
      category === "E" ? rng.pick(EXEMPTIONS) : category === "O" ? rng.pick(NOT_SUBJECT) : null;
    const exemptionReasonCode =
      category === "E" && rng.chance(0.4)
        ? rng.pick(EXEMPTION_CODES)
        : category === "O" && rng.chance(0.5)
          ? "VATEX-EU-O"
          : null;
    return { category, percent, taxable, tax, exemptionReason, exemptionReasonCode };
  });
  const lineExtension = lines.reduce((sum, line) => sum + line.net, 0n);
  const allowanceTotal = docAllowances.reduce((sum, a) => sum + a.amount, 0n);
  const chargeTotal = docCharges.reduce((sum, c) => sum + c.amount, 0n);
  const taxExclusive = lineExtension - allowanceTotal + chargeTotal;
  const taxTotal = vat.reduce((sum, v) => sum + v.tax, 0n);
  const taxInclusive = taxExclusive + taxTotal;
  const prepaid =
    taxInclusive > 0n && rng.chance(0.06) && !opts.carriable
      ? roundDiv(taxInclusive * BigInt(rng.pick([20, 30, 50])), 100n)
      : 0n;
  let rounding = 0n;
  if (naira && rng.chance(0.06) && !opts.carriable) {
    // Cash rounding to whole naira.
    const due = taxInclusive - prepaid;
    rounding = roundDiv(due, 100n) * 100n - due;
  }
  const payable = taxInclusive - prepaid + rounding;
  const writeAllowanceTotal = docAllowances.length > 0 || rng.chance(0.15);
  const writeChargeTotal = docCharges.length > 0 || rng.chance(0.15);
  const taxCurrency = !naira && rng.chance(0.5) ? "NGN" : null;
  const exchangeRate = { n: BigInt(rng.int(1400_00, 1650_00)), s: 2 };
  const taxInTaxCurrency = taxCurrency ? roundDiv(taxTotal * exchangeRate.n, pow10(exchangeRate.s)) : null;

  // Everything else ----------------------------------------------------------------------------
  const dueDate =
    kind === "Invoice"
      ? rng.chance(0.75)
        ? addDays(issueDate, rng.pick([0, 7, 14, 15, 30, 30, 45, 60, 90]))
        : null
      : rng.chance(0.3)
        ? addDays(issueDate, rng.pick([7, 14, 30]))
        : null;
  const note = rng.chance(0.4)
    ? rng.pick([
        "Thank you for your business.",
        "Goods remain the property of the seller until paid in full.",
        "Prices include delivery within Lagos.",
        kind === "CreditNote"
          ? "Credit for goods returned damaged."
          : "Please quote the invoice number with your payment.",
        "Ẹ ṣeun — thank you!",
      ])
    : null;
  let buyerReference = rng.chance(0.5)
    ? rng.pick(["Procurement", "0150abc", "Mrs. Adaeze Okafor", `DEPT-${rng.digits(3)}`])
    : null;
  let orderReference = rng.chance(0.35)
    ? rng.pick([
        `PO-${issueDate.slice(0, 4)}-${rng.digits(4)}`,
        `45000${rng.digits(5)}`,
        `LPO/${rng.digits(4)}`,
      ])
    : null;
  if (peppol && !buyerReference && !orderReference) buyerReference = `REF-${rng.digits(5)}`;
  if (peppol && orderReference === null && buyerReference === null) orderReference = `PO-${rng.digits(6)}`;
  const accountingCost = rng.chance(0.15)
    ? rng.pick(["4025:123:4343", "CC-LAGOS-01", "Project Harmattan"])
    : null;
  const billingReference =
    kind === "CreditNote"
      ? (() => {
          const date = addDays(issueDate, -rng.int(1, 90));
          return { id: invoiceNumber(rng, "Invoice", date), issueDate: date };
        })()
      : null;
  const paymentMeans =
    rng.chance(0.75) || (kind === "CreditNote" && dueDate !== null) ? rng.pick(PAYMENT_MEANS) : null;
  const bank = rng.pick(BANKS);
  const account = rng.digits(10);
  const paymentTerms = rng.chance(0.4)
    ? rng.pick(["Payment within 30 days", "Net 30", "50% advance, balance on delivery", "Due on receipt"])
    : null;
  const period = rng.chance(0.1) ? { start: `${issueDate.slice(0, 8)}01`, end: issueDate } : null;
  const delivery = rng.chance(0.2)
    ? { date: addDays(issueDate, -rng.int(0, 10)), state: rng.pick(STATES) }
    : null;
  const supplierGln = gs1(rng, "615", 13);
  const customerGln = gs1(rng, foreign ? "50" : "615", 13);

  // Writing --------------------------------------------------------------------------------------
  const numbers = style.numbers;
  const docQuantityDecimals = rng.pick([0, 0, 1, 2, 3]);
  const docPriceDecimals = rng.pick([2, 2, 4]);
  const docPercentDecimals = rng.pick([1, 2]);
  const amountText = (value: bigint): string => {
    const d = cents(value);
    const needed = neededDecimals(d);
    if (numbers === "fixed") return fixed(d, 2);
    if (numbers === "minimal") return fixed(d, needed);
    return fixed(d, rng.int(needed, 2));
  };
  const decText = (value: Dec, fixedDecimals: number, most: number): string => {
    const needed = neededDecimals(value);
    if (numbers === "fixed") return fixed(value, Math.max(needed, fixedDecimals));
    if (numbers === "minimal") return fixed(value, needed);
    return fixed(value, rng.int(needed, Math.max(needed, most)));
  };
  const quantityText = (value: Dec) => decText(value, docQuantityDecimals, 4);
  const priceText = (value: Dec) => decText(value, docPriceDecimals, 4);
  const percentText = (value: Dec) => decText(value, docPercentDecimals, 2);
  const amount = (name: string, value: bigint, currencyId: string = currency) =>
    cbc(name, amountText(value), [["currencyID", currencyId]]);
  const comment = (text: string): Kid | null =>
    style.comments && rng.chance(0.35) ? { comment: ` ${text} ` } : null;

  const taxScheme = (id: string) => cac("TaxScheme", [cbc("ID", id)]);
  const taxCategory = (
    name: "TaxCategory" | "ClassifiedTaxCategory",
    category: Category,
    reason?: { text: string | null; code: string | null },
  ) => {
    const percent = RATES[category];
    return cac(name, [
      cbc("ID", category),
      percent && cbc("Percent", percentText(percent)),
      reason?.code && cbc("TaxExemptionReasonCode", reason.code),
      reason?.text && cbc("TaxExemptionReason", reason.text),
      taxScheme("VAT"),
    ]);
  };
  const address = (a: { street?: string; city: string; postal: string; state?: string; country: string }) =>
    cac("PostalAddress", [
      a.street && cbc("StreetName", a.street),
      cbc("CityName", a.city),
      cbc("PostalZone", a.postal),
      a.state && cbc("CountrySubentity", a.state),
      cac("Country", [cbc("IdentificationCode", a.country)]),
    ]);
  const allowanceChargeEl = (ac: AllowanceCharge, category?: Category) =>
    cac("AllowanceCharge", [
      cbc("ChargeIndicator", ac.charge ? "true" : "false"),
      ac.reasonCode && cbc("AllowanceChargeReasonCode", ac.reasonCode),
      ac.reason && cbc("AllowanceChargeReason", ac.reason),
      ac.percentage && cbc("MultiplierFactorNumeric", percentText(ac.percentage)),
      amount("Amount", ac.amount),
      ac.base !== null && amount("BaseAmount", ac.base),
      category && taxCategory("TaxCategory", category),
    ]);

  const supplierParty = cac("AccountingSupplierParty", [
    cac("Party", [
      peppol
        ? cbc("EndpointID", supplierGln, [["schemeID", "0088"]])
        : rng.chance(0.4) && cbc("EndpointID", supplier.email, [["schemeID", "EM"]]),
      supplierIdentification && cac("PartyIdentification", [cbc("ID", supplierTin)]),
      rng.chance(0.5) && cac("PartyName", [cbc("Name", supplier.name)]),
      address({
        street: supplier.street,
        city: supplier.city,
        postal: supplier.postalZone,
        state: supplier.state,
        country: "NG",
      }),
      (supplierTinAs === "vat" || supplierTinAs === "both") &&
        cac("PartyTaxScheme", [cbc("CompanyID", `NG${supplierTin}`), taxScheme("VAT")]),
      supplierTinAs === "bareVat" && cac("PartyTaxScheme", [cbc("CompanyID", supplierTin), taxScheme("VAT")]),
      (supplierTinAs === "tax" || supplierTinAs === "both") &&
        cac("PartyTaxScheme", [cbc("CompanyID", supplierTin), taxScheme(taxSchemeName)]),
      cac("PartyLegalEntity", [
        cbc("RegistrationName", supplier.name),
        supplierRegistration && cbc("CompanyID", supplierRegistration),
      ]),
      cac("Contact", [
        rng.chance(0.5) &&
          cbc("Name", rng.pick(["Accounts Receivable", "Chinedu Eze", "Aisha Bello", "Funmilayo Adeyemi"])),
        cbc("Telephone", supplier.telephone),
        cbc("ElectronicMail", supplier.email),
      ]),
    ]),
  ]);

  const customerParty = cac("AccountingCustomerParty", [
    cac("Party", [
      peppol
        ? cbc("EndpointID", customerGln, [["schemeID", "0088"]])
        : rng.chance(0.3) && cbc("EndpointID", `info@${slug(customerName)}.com`, [["schemeID", "EM"]]),
      rng.chance(0.4) && cac("PartyName", [cbc("Name", customerName)]),
      foreign
        ? address({
            street: `${rng.int(1, 99)} Market Street`,
            city: foreign.city,
            postal: foreign.postal,
            country: foreign.country,
          })
        : address({
            street: rng.chance(0.85) ? `${rng.int(1, 250)} ${rng.pick(STREETS)}` : undefined,
            city: rng.pick(customerState.cities),
            postal: `${customerState.postal}${rng.digits(2)}`,
            state: rng.chance(0.8) ? customerState.code : undefined,
            country: "NG",
          }),
      customerTin &&
        (customerTinAs === "vat"
          ? cac("PartyTaxScheme", [
              cbc("CompanyID", foreign ? customerTin : `NG${customerTin}`),
              taxScheme("VAT"),
            ])
          : cac("PartyTaxScheme", [cbc("CompanyID", customerTin), taxScheme(taxSchemeName)])),
      cac("PartyLegalEntity", [cbc("RegistrationName", customerName)]),
      rng.chance(0.4) &&
        cac("Contact", [
          cbc("Name", rng.pick(["Purchasing", "Emeka Obi", "Halima Sani", "Tunde Bakare"])),
          rng.chance(0.7) && cbc("Telephone", telephone(rng)),
          cbc("ElectronicMail", `purchasing@${slug(customerName)}.com`),
        ]),
    ]),
  ]);

  const quantityName = kind === "Invoice" ? "InvoicedQuantity" : "CreditedQuantity";
  const lineEls = lines.map((line) =>
    cac(kind === "Invoice" ? "InvoiceLine" : "CreditNoteLine", [
      comment(`Line ${line.id}`),
      cbc("ID", line.id),
      line.note && cbc("Note", line.note),
      cbc(quantityName, quantityText(line.quantity), [["unitCode", line.unit.code]]),
      amount("LineExtensionAmount", line.net),
      ...line.allowances.map((a) => allowanceChargeEl(a)),
      ...line.charges.map((c) => allowanceChargeEl(c)),
      cac("Item", [
        line.description && leaf("cbc", "Description", line.description, [], true),
        cbc("Name", line.product.name),
        line.sellersItemId && cac("SellersItemIdentification", [cbc("ID", line.sellersItemId)]),
        line.gtin && cac("StandardItemIdentification", [cbc("ID", line.gtin, [["schemeID", "0160"]])]),
        line.origin && cac("OriginCountry", [cbc("IdentificationCode", line.origin)]),
        line.hsCode &&
          cac("CommodityClassification", [
            cbc("ItemClassificationCode", hsWritten(line.hsCode), [
              ["listID", "HS"],
              ["name", line.hsName ?? ""],
            ]),
          ]),
        taxCategory("ClassifiedTaxCategory", line.category),
        line.property &&
          cac("AdditionalItemProperty", [cbc("Name", line.property[0]), cbc("Value", line.property[1])]),
      ]),
      cac("Price", [
        cbc("PriceAmount", priceText(line.price), [["currencyID", currency]]),
        line.baseQuantityWritten !== "none" &&
          cbc(
            "BaseQuantity",
            quantityText({ n: line.baseQuantity, s: 0 }),
            line.baseQuantityWritten === "unit" ? [["unitCode", line.unit.code]] : [],
          ),
        line.discount &&
          line.grossPrice &&
          cac("AllowanceCharge", [
            cbc("ChargeIndicator", "false"),
            cbc("Amount", priceText(line.discount), [["currencyID", currency]]),
            cbc("BaseAmount", priceText(line.grossPrice), [["currencyID", currency]]),
          ]),
      ]),
    ]),
  );

  const taxTotalMain = cac("TaxTotal", [
    amount("TaxAmount", taxTotal),
    ...vat.map((v) =>
      cac("TaxSubtotal", [
        amount("TaxableAmount", v.taxable),
        amount("TaxAmount", v.tax),
        taxCategory("TaxCategory", v.category, { text: v.exemptionReason, code: v.exemptionReasonCode }),
      ]),
    ),
  ]);
  const taxTotals =
    taxCurrency && taxInTaxCurrency !== null
      ? rng.shuffle([taxTotalMain, cac("TaxTotal", [amount("TaxAmount", taxInTaxCurrency, taxCurrency)])])
      : [taxTotalMain];

  const ext =
    style.extensions &&
    el("ext", "UBLExtensions", [
      el("ext", "UBLExtension", [
        el("ext", "ExtensionContent", [
          el("erp", "Metadata", [
            leaf("erp", "Source", rng.pick(["odoo", "sage", "sap", "custom"])),
            leaf("erp", "ExportedAt", `${issueDate}T${String(rng.int(8, 18)).padStart(2, "0")}:00:00Z`),
            leaf("cbc", "ID", `EXT-${rng.digits(8)}`),
          ]),
        ]),
      ]),
    ]);

  const root = el("doc", kind, [
    ext,
    style.ublVersion && cbc("UBLVersionID", "2.1"),
    style.customization === "peppol" && cbc("CustomizationID", PEPPOL_CUSTOMIZATION),
    style.customization === "en16931" && cbc("CustomizationID", EN16931_CUSTOMIZATION),
    peppol && cbc("ProfileID", PEPPOL_PROFILE),
    cbc("ID", id),
    cbc("IssueDate", issueDate),
    kind === "Invoice" && dueDate && cbc("DueDate", dueDate),
    kind === "Invoice" ? cbc("InvoiceTypeCode", "380") : cbc("CreditNoteTypeCode", "381"),
    note && leaf("cbc", "Note", note, [], true),
    cbc("DocumentCurrencyCode", currency),
    taxCurrency && cbc("TaxCurrencyCode", taxCurrency),
    accountingCost && cbc("AccountingCost", accountingCost),
    buyerReference && cbc("BuyerReference", buyerReference),
    period && cac("InvoicePeriod", [cbc("StartDate", period.start), cbc("EndDate", period.end)]),
    orderReference && cac("OrderReference", [cbc("ID", orderReference)]),
    billingReference &&
      cac("BillingReference", [
        cac("InvoiceDocumentReference", [
          cbc("ID", billingReference.id),
          cbc("IssueDate", billingReference.issueDate),
        ]),
      ]),
    comment("Seller"),
    supplierParty,
    comment("Buyer"),
    customerParty,
    delivery &&
      cac("Delivery", [
        cbc("ActualDeliveryDate", delivery.date),
        cac("DeliveryLocation", [
          cac("Address", [
            cbc("StreetName", `${rng.int(1, 99)} ${rng.pick(STREETS)}`),
            cbc("CityName", rng.pick(delivery.state.cities)),
            cbc("CountrySubentity", delivery.state.code),
            cac("Country", [cbc("IdentificationCode", "NG")]),
          ]),
        ]),
      ]),
    paymentMeans &&
      cac("PaymentMeans", [
        cbc("PaymentMeansCode", paymentMeans[0], rng.chance(0.4) ? [["name", paymentMeans[1]]] : []),
        // A credit note's due date (UBL 2.1 has no CreditNote/DueDate); some invoices repeat theirs.
        dueDate && (kind === "CreditNote" || rng.chance(0.1)) && cbc("PaymentDueDate", dueDate),
        rng.chance(0.5) && cbc("PaymentID", id),
        ["30", "58", "42", "31"].includes(paymentMeans[0]) &&
          (paymentMeans[0] !== "42" || rng.chance(0.7)) &&
          cac("PayeeFinancialAccount", [
            cbc("ID", account),
            rng.chance(0.6) && cbc("Name", supplier.name),
            rng.chance(0.7) &&
              cac("FinancialInstitutionBranch", [
                cbc("ID", bank[0]),
                rng.chance(0.5) && cbc("Name", bank[1]),
              ]),
          ]),
      ]),
    paymentTerms && cac("PaymentTerms", [cbc("Note", paymentTerms)]),
    ...docAllowances.map((a) => allowanceChargeEl(a, a.category)),
    ...docCharges.map((c) => allowanceChargeEl(c, c.category)),
    comment("Totals"),
    ...taxTotals,
    cac("LegalMonetaryTotal", [
      amount("LineExtensionAmount", lineExtension),
      amount("TaxExclusiveAmount", taxExclusive),
      amount("TaxInclusiveAmount", taxInclusive),
      writeAllowanceTotal && amount("AllowanceTotalAmount", allowanceTotal),
      writeChargeTotal && amount("ChargeTotalAmount", chargeTotal),
      prepaid !== 0n && amount("PrepaidAmount", prepaid),
      rounding !== 0n && amount("PayableRoundingAmount", rounding),
      amount("PayableAmount", payable),
    ]),
    ...lineEls,
  ]);

  const xml = serialize(root, kind, style, rng);

  const expectedAc = (ac: AllowanceCharge): ExpectedAllowanceCharge => ({
    amount: money(ac.amount),
    reasonCode: ac.reasonCode,
    reason: ac.reason,
    percentage: ac.percentage && canonical(ac.percentage),
    base: ac.base === null ? null : money(ac.base),
  });
  const expectedDocAc = (ac: DocAllowanceCharge): ExpectedDocumentAllowanceCharge => {
    const percent = RATES[ac.category];
    return { ...expectedAc(ac), category: ac.category, percent: percent && canonical(percent) };
  };
  const expected: Expected = {
    kind,
    typeCode: kind === "Invoice" ? "380" : "381",
    id,
    issueDate,
    dueDate,
    currency,
    taxCurrency,
    taxInTaxCurrency: taxInTaxCurrency === null ? null : money(taxInTaxCurrency),
    customizationId:
      style.customization === "peppol"
        ? PEPPOL_CUSTOMIZATION
        : style.customization === "en16931"
          ? EN16931_CUSTOMIZATION
          : null,
    profileId: peppol ? PEPPOL_PROFILE : null,
    note,
    buyerReference,
    orderReference,
    accountingCost,
    billingReference,
    supplierTin,
    supplierName: supplier.name,
    supplierState: supplier.state,
    customerTin,
    customerName,
    customerCountry,
    paymentMeansCode: paymentMeans?.[0] ?? null,
    lines: lines.map((line) => {
      const percent = RATES[line.category];
      return {
        id: line.id,
        quantity: canonical(line.quantity),
        unitCode: line.unit.code,
        price: canonical(line.price),
        baseQuantity: line.baseQuantity.toString(),
        grossPrice: line.grossPrice && canonical(line.grossPrice),
        priceDiscount: line.discount && canonical(line.discount),
        net: money(line.net),
        name: line.product.name,
        description: line.description,
        sellersItemId: line.sellersItemId,
        hsCode: line.hsCode && hsWritten(line.hsCode),
        hsName: line.hsName,
        category: line.category,
        percent: percent && canonical(percent),
        allowances: line.allowances.map(expectedAc),
        charges: line.charges.map(expectedAc),
      };
    }),
    allowances: docAllowances.map(expectedDocAc),
    charges: docCharges.map(expectedDocAc),
    vat: vat.map((v) => ({
      category: v.category,
      percent: v.percent && canonical(v.percent),
      taxable: money(v.taxable),
      tax: money(v.tax),
      exemptionReason: v.exemptionReason,
      exemptionReasonCode: v.exemptionReasonCode,
    })),
    totals: {
      lineExtension: money(lineExtension),
      allowanceTotal: money(allowanceTotal),
      chargeTotal: money(chargeTotal),
      taxExclusive: money(taxExclusive),
      tax: money(taxTotal),
      taxInclusive: money(taxInclusive),
      prepaid: money(prepaid),
      rounding: money(rounding),
      payable: money(payable),
    },
    style,
  };
  return { xml, expected };
}
