import { type Static, Type } from "typebox";

const Decimal = Type.String({ format: "decimal", description: "numeric text, e.g. 645000.00" });

export const FiscalizationReport = Type.Object({
  agent_tin: Type.String({ format: "tin" }),
  beneficiary_tin: Type.String({ format: "tin" }),
  base_amount: Decimal,
  other_taxes: Decimal,
  total_amount: Decimal,
  vat_calculated: Decimal,
  vat_rate: Decimal,
  vat_status: Type.String({
    minLength: 1,
    maxLength: 50,
    description: "a tax category code, e.g. STANDARD_VAT",
  }),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  item_description: Type.String({ minLength: 1, maxLength: 1000 }),
  irn: Type.String({ minLength: 1, maxLength: 100 }),
  transaction_date: Type.String({ format: "date" }),
});

export type FiscalizationReport = Static<typeof FiscalizationReport>;
