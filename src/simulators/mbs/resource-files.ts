import { readFileSync, statSync } from "node:fs";
import path from "node:path";

// [recorded] Five of MBS's reference lists as its sandbox served them are public (the MBS spec,
// section 2): countries, currencies, invoice-types, vat-exemptions, services-codes. They are the
// authority's data, not this repository's: the simulator reads them from a folder given at start
// (`--resources <dir>`, `resourcesDir`), one file per list named after it, and serves each exactly as
// read (the same entries, order, field names and values). Without a folder it serves its built-in
// lists (resources.ts).
//
// Liberal in what is accepted: a file holds the answer's `data` array, or the whole answer
// `{"code": 200, "data": [...]}`; a byte-order mark is skipped; an entry may carry fields beyond
// those checked (served as read). Exact in what is checked: every file present and valid JSON, a
// non-empty list of objects, each with the fields MBS's entries have, of their types, and the codes
// the simulator's own validation reads in the form the spec gives them. The first problem stops the
// start, naming the file, the entry and the field.

type FieldType = "string" | "number";

/** [recorded] The fields of each list's entries and their JSON types (the MBS spec, section 2). */
export const LIST_FIELDS = {
  countries: {
    name: "string",
    alpha_2: "string",
    alpha_3: "string",
    country_code: "string",
    iso_3166_2: "string",
    region: "string",
    sub_region: "string",
    intermediate_region: "string",
    region_code: "string",
    sub_region_code: "string",
    intermediate_region_code: "string",
  },
  currencies: {
    code: "string",
    name: "string",
    name_plural: "string",
    symbol: "string",
    symbol_native: "string",
    decimal_digits: "number",
    rounding: "number",
  },
  "invoice-types": { code: "string", value: "string" },
  "vat-exemptions": {
    heading_no: "string",
    harmonized_system_code: "string",
    tariff_category: "string",
    tariff: "string",
    description: "string",
  },
  "services-codes": { code: "string", description: "string" },
} as const satisfies Record<string, Record<string, FieldType>>;

export type LoadedListName = keyof typeof LIST_FIELDS;
export const LOADED_LISTS = Object.keys(LIST_FIELDS) as LoadedListName[];

export type Entry = Readonly<Record<string, unknown>>;
export type LoadedLists = Readonly<Record<LoadedListName, readonly Entry[]>>;

/**
 * The form of the codes the validation matches documents against, as the spec gives them: a
 * country's alpha-2 code, an ISO 4217 currency code, an invoice type's string of digits [recorded],
 * a 4-digit ISIC class [recorded].
 */
const CODE_FORMS: Partial<Record<LoadedListName, { field: string; form: RegExp; says: string }>> = {
  countries: { field: "alpha_2", form: /^[A-Z]{2}$/, says: "two capital letters" },
  currencies: { field: "code", form: /^[A-Z]{3}$/, says: "three capital letters" },
  "invoice-types": { field: "code", form: /^\d+$/, says: "digits" },
  "services-codes": { field: "code", form: /^\d{4}$/, says: "four digits" },
};

export class ResourceFilesError extends Error {}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const typeName = (value: unknown) =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value;

/** The entries of a parsed file: a bare list, or the `data` of a whole answer. */
function entriesOf(parsed: unknown): unknown[] | undefined {
  if (Array.isArray(parsed)) return parsed;
  if (isRecord(parsed) && Array.isArray(parsed.data)) return parsed.data;
  return undefined;
}

function checkEntry(list: LoadedListName, entry: unknown, i: number): string | undefined {
  if (!isRecord(entry)) return `[${i}] must be an object, not ${typeName(entry)}`;
  for (const [field, type] of Object.entries(LIST_FIELDS[list])) {
    if (!(field in entry)) return `[${i}] has no ${field}`;
    if (typeof entry[field] !== type) {
      return `[${i}].${field} must be a ${type}, not ${typeName(entry[field])} ${JSON.stringify(entry[field])}`;
    }
  }
  const code = CODE_FORMS[list];
  if (code && !code.form.test(entry[code.field] as string)) {
    return `[${i}].${code.field} ${JSON.stringify(entry[code.field])} is not ${code.says}`;
  }
  return undefined;
}

function readList(dir: string, list: LoadedListName): Entry[] {
  const file = `${list}.json`;
  const fail = (problem: string) => new ResourceFilesError(`MBS resources folder ${dir}: ${file} ${problem}`);
  let text: string;
  try {
    text = readFileSync(path.join(dir, file), "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw fail(
      code === "ENOENT"
        ? `is missing (the data array of GET /api/v1/invoice/resources/${list})`
        : `cannot be read: ${(err as Error).message}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (err) {
    throw fail(`is not valid JSON: ${(err as Error).message}`);
  }
  const entries = entriesOf(parsed);
  if (!entries) {
    throw fail(
      `must hold a list of entries, or an answer {"code": 200, "data": [...]}; it holds ${typeName(parsed)}`,
    );
  }
  if (entries.length === 0) throw fail("holds no entries");
  for (const [i, entry] of entries.entries()) {
    const problem = checkEntry(list, entry, i);
    if (problem) throw fail(problem);
  }
  return entries as Entry[];
}

/** The five lists of a folder, each checked; the first problem throws, naming the file. */
export function loadResourceFiles(dir: string): LoadedLists {
  let isDirectory = false;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch {
    // Reported below with what the folder must hold.
  }
  if (!isDirectory) {
    throw new ResourceFilesError(
      `MBS resources folder ${dir} is not a folder (it must hold ${LOADED_LISTS.map((l) => `${l}.json`).join(", ")})`,
    );
  }
  return {
    countries: readList(dir, "countries"),
    currencies: readList(dir, "currencies"),
    "invoice-types": readList(dir, "invoice-types"),
    "vat-exemptions": readList(dir, "vat-exemptions"),
    "services-codes": readList(dir, "services-codes"),
  };
}
