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
