import fc from "fast-check";
import type { Json } from "../../helpers.ts";

/*
 * Invoices as real ERPs and point-of-sale systems build them: their own code multiplies and adds in
 * binary floating point, in their own order, and writes what it got. Some round every step as a
 * spreadsheet's ROUND does (half away from zero), some as Python's round() does (on the exact binary
 * value), some round nothing; rates are sent without amounts, optional fields are left out, ids are
 * upper-cased. Every invoice built here is correct: its totals are what its lines say.
 */

export type Rounding = "none" | "spreadsheet" | "python";

const roundWith = (mode: Rounding, value: number): number => {
  if (mode === "none") return value;
  if (mode === "python") return Number(value.toFixed(2));
  return Math.sign(value) * (Math.round(Math.abs(value) * 100) / 100);
};

type LineSpec = {
  quantity: number;
  price: number;
  perQuantity: number | undefined;
  discountRate: number | undefined;
  discountAs: "rate" | "amount" | "both";
  feeRate: number | undefined;
  feeAs: "rate" | "amount" | "both";
  name: string;
  hs: string;
};

export type ErpSpec = {
  rounding: Rounding;
  upperCaseId: boolean;
  withOptional: boolean;
  kind: "B2B" | "B2C";
  typeCode: "381" | "388" | "390";
  day: number;
  lines: LineSpec[];
  allowances: { charge: boolean; amount: number }[];
  taxInLines: boolean;
};

const money = (max: number) => fc.integer({ min: 1, max: max * 100 }).map((kobo) => kobo / 100);

const line: fc.Arbitrary<LineSpec> = fc.record({
  quantity: fc.oneof(
    fc.integer({ min: 1, max: 500 }),
    fc.integer({ min: 1, max: 9999 }).map((n) => n / 10), // 2.5 kg
    fc.integer({ min: 1, max: 99999 }).map((n) => n / 1000), // 1.234 l
  ),
  price: fc.oneof(
    money(5_000_000),
    fc.integer({ min: 1, max: 9_999_999 }).map((n) => n / 10_000), // 12.3456 a litre
  ),
  perQuantity: fc.constantFrom(undefined, undefined, 1, 12, 100),
  discountRate: fc.option(fc.constantFrom(2.5, 5, 7.5, 10, 12.5, 15, 33), { nil: undefined }),
  discountAs: fc.constantFrom("rate", "amount", "both"),
  feeRate: fc.option(fc.constantFrom(1, 2, 3.5), { freq: 4, nil: undefined }),
  feeAs: fc.constantFrom("rate", "amount", "both"),
  name: fc.constantFrom("Portland cement 50kg", "Ọ̀gbọ́n rice 25kg", "Diesel (AGO)", "Steel rod 12mm", "Garri"),
  hs: fc.constantFrom("2523.29", "1006.30", "2710.19", "7214.20", "1106.20"),
});

export const erpSpec: fc.Arbitrary<ErpSpec> = fc.record({
  rounding: fc.constantFrom("none", "spreadsheet", "python"),
  upperCaseId: fc.boolean(),
  withOptional: fc.boolean(),
  kind: fc.constantFrom("B2B", "B2C"),
  typeCode: fc.constantFrom("381", "388", "390"),
  day: fc.integer({ min: 1, max: 28 }),
  lines: fc.array(line, { minLength: 1, maxLength: 12 }),
  allowances: fc.array(fc.record({ charge: fc.boolean(), amount: money(20_000) }), { maxLength: 3 }),
  taxInLines: fc.boolean(),
});

/** The invoice an ERP with `spec` sends for `who`, under the IRN number `number`. */
export function erpInvoice(
  spec: ErpSpec,
  who: { business_id: string; service_id: string; tin: string },
  number: string,
): Json {
  const r = (value: number) => roundWith(spec.rounding, value);
  const month = 10;
  const date = `2026-${String(month).padStart(2, "0")}-${String(spec.day).padStart(2, "0")}`;
  const lines = spec.lines.map((l, i) => {
    const gross = (l.quantity * l.price) / (l.perQuantity ?? 1);
    const discount = l.discountRate === undefined ? 0 : r((gross * l.discountRate) / 100);
    const fee = l.feeRate === undefined ? 0 : r((gross * l.feeRate) / 100);
    const out: Json = {
      hsn_code: l.hs,
      product_category: "Goods",
      invoiced_quantity: l.quantity,
      line_extension_amount: r(gross - discount + fee),
      item: { name: `${l.name} #${i + 1}` },
      price: {
        price_amount: l.price,
        ...(l.perQuantity === undefined ? {} : { base_quantity: l.perQuantity }),
        ...(spec.withOptional ? { price_unit: "NGN per unit" } : {}),
      },
    };
    if (l.discountRate !== undefined) {
      if (l.discountAs !== "amount") out.discount_rate = l.discountRate;
      if (l.discountAs !== "rate") out.discount_amount = discount;
    }
    if (l.feeRate !== undefined) {
      if (l.feeAs !== "amount") out.fee_rate = l.feeRate;
      if (l.feeAs !== "rate") out.fee_amount = fee;
    }
    return out;
  });
  // Added up in the order the lines are, the way a loop does.
  let lineTotal = 0;
  for (const l of lines) lineTotal += l.line_extension_amount as number;
  let exclusive = lineTotal;
  for (const a of spec.allowances) exclusive += a.charge ? a.amount : -a.amount;
  if (exclusive <= 0) {
    // Allowances larger than the goods: no ERP issues that; keep the charges only.
    spec = { ...spec, allowances: spec.allowances.filter((a) => a.charge) };
    exclusive = lineTotal;
    for (const a of spec.allowances) exclusive += a.amount;
  }
  let tax: number;
  if (spec.taxInLines && spec.allowances.length === 0) {
    // VAT worked out per line and added up (the base is still the whole of the lines).
    tax = 0;
    for (const l of lines) tax += ((l.line_extension_amount as number) * 7.5) / 100;
    tax = r(tax);
  } else {
    tax = r((exclusive * 7.5) / 100);
  }
  const inclusive = exclusive + tax;
  const businessId = spec.upperCaseId ? who.business_id.toUpperCase() : who.business_id;
  const doc: Json = {
    business_id: businessId,
    irn: `${number}-${who.service_id}-${date.replaceAll("-", "")}`,
    issue_date: date,
    invoice_type_code: spec.typeCode,
    invoice_kind: spec.kind,
    document_currency_code: "NGN",
    tax_currency_code: "NGN",
    accounting_supplier_party: {
      party_name: "Adéwálé & Sons Trading Ltd",
      tin: who.tin,
      email: "accounts@adewale.example",
      postal_address: { street_name: "12 Marina", city_name: "Lagos", state: "NG-LA", country: "NG" },
    },
    accounting_customer_party: spec.withOptional
      ? {
          party_name: "Ɓala Hauwa'u Stores",
          tin: "31845560-0001",
          postal_address: { city_name: "Kano", state: "NG-KN", country: "NG" },
        }
      : { party_name: "Walk-in customer" },
    ...(spec.allowances.length > 0
      ? { allowance_charge: spec.allowances.map((a) => ({ charge_indicator: a.charge, amount: a.amount })) }
      : {}),
    tax_total: [
      {
        tax_amount: tax,
        tax_subtotal: [
          {
            taxable_amount: exclusive,
            tax_amount: tax,
            tax_category: { id: "STANDARD_VAT", percent: 7.5 },
          },
        ],
      },
    ],
    legal_monetary_total: {
      line_extension_amount: lineTotal,
      tax_exclusive_amount: exclusive,
      tax_inclusive_amount: inclusive,
      payable_amount: inclusive,
    },
    invoice_line: lines,
  };
  if (spec.withOptional) {
    Object.assign(doc, {
      due_date: `2026-12-${String(spec.day).padStart(2, "0")}`,
      issue_time: "10:15:00",
      payment_status: "PENDING",
      note: "Thank you for your business",
      payment_means: [{ payment_means_code: "30" }],
    });
  }
  return doc;
}

/** The paths of every amount an ERP's invoice declares, which the rules bind to the others. */
export function boundAmounts(doc: Json): string[] {
  const paths = [
    "legal_monetary_total.line_extension_amount",
    "legal_monetary_total.tax_exclusive_amount",
    "legal_monetary_total.tax_inclusive_amount",
    "legal_monetary_total.payable_amount",
    "tax_total[0].tax_amount",
    "tax_total[0].tax_subtotal[0].tax_amount",
  ];
  const lines = doc.invoice_line as Json[];
  lines.forEach((l, i) => {
    paths.push(`invoice_line[${i}].line_extension_amount`);
    if ("discount_amount" in l) paths.push(`invoice_line[${i}].discount_amount`);
    if ("fee_amount" in l) paths.push(`invoice_line[${i}].fee_amount`);
  });
  ((doc.allowance_charge as Json[] | undefined) ?? []).forEach((_, i) => {
    paths.push(`allowance_charge[${i}].amount`);
  });
  return paths;
}

/** Reads or writes a value at a path such as `invoice_line[2].discount_amount`. */
export function at(doc: Json, path: string, value?: number): number {
  const steps = path.replace(/\[(\d+)\]/g, ".$1").split(".");
  let node = doc as Record<string, unknown>;
  for (const step of steps.slice(0, -1)) node = node[step] as Record<string, unknown>;
  const last = steps[steps.length - 1] as string;
  if (value !== undefined) node[last] = value;
  return node[last] as number;
}
