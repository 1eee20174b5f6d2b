// [recorded] MBS's `vat-exemptions` list has 236 entries (228 distinct HS codes) in 10 tariff groups,
// with the fields `heading_no`, `harmonized_system_code`, `tariff_category`, `tariff`, `description`
// (which may be empty), e.g. `29.15`, `2915.3100`, the medical/pharmaceutical raw-materials group,
// ethyl acetate. No public source of the full list is available, so the simulator serves this
// extract: real HS codes and names, grouped in the style of the recorded entry. It is not the list.

export type VatExemption = {
  heading_no: string;
  harmonized_system_code: string;
  tariff_category: string;
  tariff: string;
  description: string;
};

const MEDICAL = "Medical and pharmaceutical products and raw materials";
const FOOD = "Basic food items";
const EDUCATION = "Books and educational materials";
const AGRICULTURE = "Agricultural inputs and equipment";
const BABY = "Baby products";

export const VAT_EXEMPTIONS_EXTRACT: readonly VatExemption[] = [
  ["29.15", "2915.3100", MEDICAL, "Ethyl acetate", ""],
  ["29.41", "2941.1000", MEDICAL, "Penicillins and their derivatives", "Antibiotics, raw material"],
  ["30.02", "3002.4100", MEDICAL, "Vaccines for human medicine", ""],
  ["30.04", "3004.9000", MEDICAL, "Other medicaments, in measured doses", ""],
  ["04.01", "0401.1000", FOOD, "Milk and cream, fat content not exceeding 1%", ""],
  ["10.06", "1006.3000", FOOD, "Semi-milled or wholly milled rice", ""],
  ["11.01", "1101.0000", FOOD, "Wheat or meslin flour", ""],
  ["49.01", "4901.9900", EDUCATION, "Printed books", "Other"],
  ["49.03", "4903.0000", EDUCATION, "Children's picture, drawing or colouring books", ""],
  ["31.02", "3102.1000", AGRICULTURE, "Urea", "Fertiliser"],
  ["84.32", "8432.1000", AGRICULTURE, "Ploughs", ""],
  ["19.01", "1901.1000", BABY, "Preparations for infant use, put up for retail sale", ""],
].map(([heading_no, harmonized_system_code, tariff_category, tariff, description]) => ({
  heading_no: heading_no as string,
  harmonized_system_code: harmonized_system_code as string,
  tariff_category: tariff_category as string,
  tariff: tariff as string,
  description: description as string,
}));
