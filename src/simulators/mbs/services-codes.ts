import { readFileSync } from "node:fs";

// [recorded] MBS's `services-codes` list: 419 entries `{code, description}`, 4-digit codes that read
// as ISIC Rev. 4 classes (`0111` … `9900`). No npm package carries ISIC Rev. 4, and the classification
// is not copied into this repository: by default the simulator serves the extract below (real ISIC
// Rev. 4 classes, the first and last of MBS's list among them); `isicFile` (`--services-codes`)
// loads the full classification from a JSON file.

export type ServiceCode = { code: string; description: string };

/** The default: an extract of 16 ISIC Rev. 4 classes, enough for examples and shape checks. */
export const SERVICE_CODES_EXTRACT: readonly ServiceCode[] = [
  ["0111", "Growing of cereals (except rice), leguminous crops and oil seeds"],
  ["0112", "Growing of rice"],
  ["1061", "Manufacture of grain mill products"],
  ["2394", "Manufacture of cement, lime and plaster"],
  ["4100", "Construction of buildings"],
  ["4321", "Electrical installation"],
  ["4663", "Wholesale of construction materials, hardware, plumbing and heating equipment and supplies"],
  ["4923", "Freight transport by road"],
  ["5610", "Restaurants and mobile food service activities"],
  ["6201", "Computer programming activities"],
  ["6202", "Computer consultancy and computer facilities management activities"],
  ["6920", "Accounting, bookkeeping and auditing activities; tax consultancy"],
  ["7110", "Architectural and engineering activities and related technical consultancy"],
  ["8510", "Pre-primary and primary education"],
  ["8620", "Medical and dental practice activities"],
  ["9900", "Activities of extraterritorial organizations and bodies"],
].map(([code, description]) => ({ code: code as string, description: description as string }));

const CLASS = /^\d{4}$/;
// Root, sections, divisions, groups, classes: each an object in a list, 9 levels; a bound keeps a
// pathological file from recursing far.
const MAX_DEPTH = 12;

/**
 * Every `{class, description}` (or `{code, description}`) with a 4-digit code anywhere in the tree:
 * the ISIC JSON nests sections > divisions > groups > classes; a flat list of classes works too.
 */
function classesIn(node: unknown, out: ServiceCode[], depth: number): void {
  if (depth > MAX_DEPTH || typeof node !== "object" || node === null) return;
  if (Array.isArray(node)) {
    for (const item of node) classesIn(item, out, depth + 1);
    return;
  }
  const record = node as Record<string, unknown>;
  const code = record.class ?? record.code;
  if (typeof code === "string" && CLASS.test(code) && typeof record.description === "string") {
    out.push({ code, description: record.description });
    return;
  }
  for (const value of Object.values(record)) classesIn(value, out, depth + 1);
}

/** The ISIC Rev. 4 classes of a JSON file (e.g. `../shared/data/isic4/isic4-en.json`), sorted by code. */
export function loadServiceCodes(file: string): ServiceCode[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`services codes file ${file}: ${(err as Error).message}`);
  }
  const found: ServiceCode[] = [];
  classesIn(parsed, found, 0);
  if (found.length === 0) {
    throw new Error(
      `services codes file ${file}: no ISIC class found (expected {"class": "0111", "description": "…"} entries)`,
    );
  }
  const unique = new Map(found.map((c) => [c.code, c]));
  return [...unique.values()].sort((a, b) => a.code.localeCompare(b.code));
}
