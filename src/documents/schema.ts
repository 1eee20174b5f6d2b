import { type Static, Type } from "typebox";

/*
 * The invoice document of validate, sign and sign-transmit. Required fields are the spec's shortest
 * form (rule 2 under Invoices); code lists and cross-field rules are checked by the rules, which name
 * the offending value. Unknown fields are accepted: newer clients send fields this version does not
 * know, and rejecting them would break them. An optional text field sent empty (or blank) is read as
 * absent before anything is checked, and a missing `invoice_kind` is derived (rules/lenient.ts).
 */

/** Lines in one invoice document. */
export const MAX_LINES = 10_000;

const Text = (maxLength = 500) => Type.String({ minLength: 1, maxLength });
const DateText = Type.String({ format: "date", maxLength: 10, description: "YYYY-MM-DD" });
const Amount = Type.Number({ minimum: 0, maximum: 1e15 });
const Quantity = Type.Number({ exclusiveMinimum: 0, maximum: 1e12 });
const Rate = Type.Number({ minimum: 0, maximum: 100 });
/**
 * A line may be negative: a return or a correction on an invoice (EN 16931 lets a line's quantity
 * and net amount be, its price never). Its quantity is never 0; the totals stay positive.
 */
const LineQuantity = Type.Number({ minimum: -1e12, maximum: 1e12, not: Type.Literal(0) });
const LineAmount = Type.Number({ minimum: -1e15, maximum: 1e15 });

const DocumentReference = Type.Object({ irn: Text(100), issue_date: DateText });

/**
 * A tax category, as lines and allowances may carry it too: which VAT each line's amount bears is
 * what a UBL (EN 16931) copy must say, and this API's breakdown alone does not when it has several.
 * The exemption reason is EN 16931's (BT-120, BT-121): a zero-rated category with one is exempt.
 */
const TaxCategory = Type.Object({
  id: Text(50),
  percent: Rate,
  exemption_reason: Type.Optional(Text(1000)),
  exemption_reason_code: Type.Optional(Text(50)),
});

const PostalAddress = Type.Object({
  street_name: Type.Optional(Text()),
  city_name: Type.Optional(Text(200)),
  postal_zone: Type.Optional(Type.String({ maxLength: 20 })),
  lga: Type.Optional(Type.String({ maxLength: 20, description: "LGA code, NG-XX-YYY" })),
  state: Type.Optional(Type.String({ maxLength: 10, description: "state code, NG-XX" })),
  country: Type.String({
    format: "country",
    maxLength: 2,
    description: "an assigned ISO 3166-1 alpha-2 code, e.g. NG",
  }),
});

const Party = (required: "supplier" | "customer") =>
  Type.Object({
    party_name: Text(300),
    tin:
      required === "supplier"
        ? Type.String({ format: "tin", maxLength: 40 })
        : // The authority refuses a customer TIN under 5 characters (its `details`: "…tin must be at
          // least in length or value 5").
          Type.Optional(Type.String({ format: "tin", minLength: 5, maxLength: 40 })),
    email: Type.Optional(Type.String({ format: "email", maxLength: 254 })),
    telephone: Type.Optional(Type.String({ format: "telephone", maxLength: 16 })),
    business_description: Type.Optional(Text(1000)),
    // A point-of-sale customer often has no address on file; the seller always does.
    postal_address: required === "supplier" ? PostalAddress : Type.Optional(PostalAddress),
  });

export const InvoiceLine = Type.Object({
  hsn_code: Text(50),
  product_category: Text(300),
  discount_rate: Type.Optional(Rate),
  discount_amount: Type.Optional(Amount),
  fee_rate: Type.Optional(Rate),
  fee_amount: Type.Optional(Amount),
  invoiced_quantity: LineQuantity,
  line_extension_amount: LineAmount,
  item: Type.Object({
    name: Text(300),
    description: Type.Optional(Text(1000)),
    sellers_item_identification: Type.Optional(Text(100)),
  }),
  price: Type.Object({
    price_amount: Amount,
    base_quantity: Type.Optional(Quantity),
    price_unit: Type.Optional(Text(100)),
  }),
  tax_category: Type.Optional(TaxCategory),
});

export const InvoiceDocument = Type.Object(
  {
    business_id: Type.String({ format: "uuid", maxLength: 36 }),
    irn: Text(100),
    issue_date: DateText,
    due_date: Type.Optional(DateText),
    issue_time: Type.Optional(Type.String({ format: "time", maxLength: 8 })),
    invoice_type_code: Text(10),
    invoice_kind: Type.String({
      minLength: 1,
      maxLength: 10,
      description:
        "B2B, B2C or B2G; when missing or empty it is derived (B2B when the customer party has a TIN, else B2C), with a warning, and the derived value is signed",
    }),
    payment_status: Type.Optional(Text(20)),
    note: Type.Optional(Type.String({ maxLength: 5000 })),
    tax_point_date: Type.Optional(DateText),
    document_currency_code: Text(3),
    tax_currency_code: Text(3),
    invoice_delivery_period: Type.Optional(Type.Object({ start_date: DateText, end_date: DateText })),
    order_reference: Type.Optional(Text(200)),
    billing_reference: Type.Optional(Type.Array(DocumentReference, { maxItems: 100 })),
    dispatch_document_reference: Type.Optional(DocumentReference),
    receipt_document_reference: Type.Optional(DocumentReference),
    originator_document_reference: Type.Optional(DocumentReference),
    contract_document_reference: Type.Optional(DocumentReference),
    accounting_supplier_party: Party("supplier"),
    accounting_customer_party: Party("customer"),
    actual_delivery_date: Type.Optional(DateText),
    payment_means: Type.Optional(
      Type.Array(
        Type.Object({
          payment_means_code: Text(10),
          payment_due_date: Type.Optional(DateText),
          // Where a transfer goes (EN 16931 BT-84 to BT-86): a credit transfer must say it (BR-61).
          payee_financial_account: Type.Optional(
            Type.Object({
              id: Text(100),
              name: Type.Optional(Text(200)),
              institution: Type.Optional(Text(100)),
            }),
          ),
        }),
        { maxItems: 20 },
      ),
    ),
    payment_terms_note: Type.Optional(Type.String({ maxLength: 5000 })),
    allowance_charge: Type.Optional(
      Type.Array(
        Type.Object({
          charge_indicator: Type.Boolean(),
          amount: Amount,
          reason: Type.Optional(Text(500)),
          reason_code: Type.Optional(Text(10)),
          tax_category: Type.Optional(TaxCategory),
        }),
        { maxItems: 100 },
      ),
    ),
    tax_total: Type.Optional(
      Type.Array(
        Type.Object({
          tax_amount: Amount,
          tax_subtotal: Type.Array(
            Type.Object({
              taxable_amount: Amount,
              tax_amount: Amount,
              tax_category: TaxCategory,
            }),
            { minItems: 1, maxItems: 50 },
          ),
        }),
        { maxItems: 20 },
      ),
    ),
    /** The VAT total in `tax_currency_code` when it is not the document's (EN 16931 BT-111). */
    tax_amount_in_tax_currency: Type.Optional(Amount),
    legal_monetary_total: Type.Object({
      line_extension_amount: Amount,
      tax_exclusive_amount: Amount,
      tax_inclusive_amount: Amount,
      payable_amount: Amount,
    }),
    invoice_line: Type.Array(InvoiceLine, { minItems: 1, maxItems: MAX_LINES }),
  },
  { $id: "InvoiceDocument" },
);

export type InvoiceDocument = Static<typeof InvoiceDocument>;

/** The fields stored only encrypted. */
export const SEALED_FIELDS = ["note", "payment_terms_note"] as const;
