// Only the list of assigned codes: the package's index also loads every subdivision (350 kB).
import { iso31661 } from "iso-3166/1.js";

/**
 * The ISO 3166-1 alpha-2 codes assigned to a country or territory (249), from the `iso-3166`
 * package. The authority's own `resources/countries` list has the same 249 entries; reserved codes
 * (`UK`, `EU`, …) and unassigned ones are not countries of an address.
 */
export const COUNTRY_CODES: ReadonlySet<string> = new Set(iso31661.map((c) => c.alpha2));
