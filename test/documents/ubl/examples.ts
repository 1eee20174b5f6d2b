import fs from "node:fs";
import path from "node:path";
import { SHARED_DIR, type Tenant } from "../../helpers.ts";

/** The UBL 2.1 schemas, beside the repository (as the catalogs): what EINVOICE_UBL_SCHEMAS names. */
export const UBL_SCHEMAS = path.join(SHARED_DIR, "data", "ubl", "xsd");
export const EXAMPLES = path.join(SHARED_DIR, "data", "ubl", "examples");
export const EXAMPLE_FILES = fs.readdirSync(EXAMPLES).filter((f) => f.endsWith(".xml"));

/** An example as it is. */
export const example = (file: string) => fs.readFileSync(path.join(EXAMPLES, file), "utf8");

const SUPPLIER = /<cac:AccountingSupplierParty>[\s\S]*?<\/cac:AccountingSupplierParty>/;

/**
 * An example with the test business as its seller: a Nigerian party (its TIN, an address in Lagos),
 * and the HS code the authority wants on every line, as a Nigerian ERP adds it to the item's
 * classification. Nothing else changes: lines, amounts and VAT are the example's.
 */
export function asSupplier(xml: string, who: Pick<Tenant, "tin">): string {
  const supplier = `<cac:AccountingSupplierParty><cac:Party>
    <cac:PartyName><cbc:Name>Okafor Building Supplies</cbc:Name></cac:PartyName>
    <cac:PostalAddress><cbc:StreetName>14 Aba Road</cbc:StreetName><cbc:CityName>Ikeja</cbc:CityName>
      <cbc:PostalZone>100001</cbc:PostalZone><cbc:CountrySubentity>NG-LA</cbc:CountrySubentity>
      <cac:Country><cbc:IdentificationCode>NG</cbc:IdentificationCode></cac:Country></cac:PostalAddress>
    <cac:PartyTaxScheme><cbc:CompanyID>NG${who.tin}</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>
    <cac:PartyLegalEntity><cbc:RegistrationName>Okafor Building Supplies Ltd</cbc:RegistrationName></cac:PartyLegalEntity>
  </cac:Party></cac:AccountingSupplierParty>`;
  const classified = xml.replace(
    /(<cac:ClassifiedTaxCategory>)/g,
    `<cac:CommodityClassification><cbc:ItemClassificationCode listID="HS" name="Portland cement">2523.29</cbc:ItemClassificationCode></cac:CommodityClassification>$1`,
  );
  return classified.replace(SUPPLIER, supplier);
}

const money = (n: number) => (Math.round(n * 100) / 100).toFixed(2);

/**
 * The example as a Nigerian seller issues it: its VAT at Nigeria's 7.5% where it charges a standard
 * rate of its own country (25%, 21% or 6%), each subtotal's tax and the totals that include tax
 * computed again. Lines, their amounts and the net totals stay the example's.
 */
export function atNigerianVat(xml: string): string {
  if (/PrepaidAmount|PayableRoundingAmount/.test(xml)) throw new Error("the payable would need them too");
  let tax = 0;
  const rated = xml.replace(/(<cbc:ID>S<\/cbc:ID>\s*<cbc:Percent>)[^<]*(<\/cbc:Percent>)/g, "$17.5$2");
  const subtotals = rated.replace(/<cac:TaxSubtotal>[\s\S]*?<\/cac:TaxSubtotal>/g, (sub) => {
    const taxable = Number(/<cbc:TaxableAmount[^>]*>([^<]+)</.exec(sub)?.[1]);
    const percent = Number(/<cbc:Percent>([^<]+)</.exec(sub)?.[1]);
    const amount = Math.round(taxable * percent) / 100;
    tax += amount;
    return sub.replace(/(<cbc:TaxAmount[^>]*>)[^<]*(<)/, `$1${money(amount)}$2`);
  });
  const total = subtotals.replace(/(<cac:TaxTotal>\s*<cbc:TaxAmount[^>]*>)[^<]*(<)/, `$1${money(tax)}$2`);
  const exclusive = Number(/<cbc:TaxExclusiveAmount[^>]*>([^<]+)</.exec(total)?.[1]);
  const inclusive = money(exclusive + tax);
  return total
    .replace(/(<cbc:TaxInclusiveAmount[^>]*>)[^<]*(<)/, `$1${inclusive}$2`)
    .replace(/(<cbc:PayableAmount[^>]*>)[^<]*(<)/, `$1${inclusive}$2`);
}
