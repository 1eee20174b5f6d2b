import type { Violation } from "../errors.ts";
import { FORMAT_MESSAGES } from "./ajv.ts";

type AjvLikeError = {
  instancePath: string;
  keyword: string;
  message?: string | undefined;
  params: Record<string, unknown>;
};

/** `/invoice_line/0/price` → `invoice_line[0].price`. */
export function pointerToPath(pointer: string): string {
  let out = "";
  for (const raw of pointer.split("/").slice(1)) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(part) ? `[${part}]` : out === "" ? part : `.${part}`;
  }
  return out;
}

function joinPath(base: string, key: string): string {
  return base === "" ? key : `${base}.${key}`;
}

/** Turns JSON-schema validator errors into violations that name the field and the rule. */
export function schemaViolations(errors: readonly AjvLikeError[], root = ""): Violation[] {
  const seen = new Set<string>();
  const out: Violation[] = [];
  for (const e of errors) {
    // An anyOf/oneOf failure repeats what its branches already said.
    if (e.keyword === "anyOf" || e.keyword === "oneOf" || e.keyword === "if") continue;
    let path = pointerToPath(e.instancePath);
    if (root) path = path ? joinPath(root, path) : root;
    let message: string;
    let rule = e.keyword;
    switch (e.keyword) {
      case "required":
        path = joinPath(path, String(e.params.missingProperty));
        message = "is required";
        break;
      case "additionalProperties":
        path = joinPath(path, String(e.params.additionalProperty));
        rule = "unknown_field";
        message = "is not a known field";
        break;
      case "type":
        message = `must be ${article(String(e.params.type))}`;
        break;
      case "enum":
        message = `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
        break;
      case "format":
        message = FORMAT_MESSAGES[String(e.params.format)] ?? `must match format ${String(e.params.format)}`;
        break;
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum":
      case "minLength":
      case "maxLength":
      case "minItems":
      case "maxItems":
        message = e.message ?? "is out of range";
        break;
      case "not":
        // The documents' one `not` is a line's quantity, which may be negative but never 0.
        rule = "nonzero";
        message = "must not be 0";
        break;
      case "const":
        message = `must be ${JSON.stringify(e.params.allowedValue)}`;
        break;
      default:
        message = e.message ?? "is invalid";
    }
    const key = `${path}|${rule}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path: path || "(body)", rule, message });
  }
  // A field with a format also has the format's length (a date's 10 characters): a text too long
  // (or too short) for it is reported once, as not of the format.
  const formatted = new Set(out.filter((v) => v.rule === "format").map((v) => v.path));
  return formatted.size === 0
    ? out
    : out.filter((v) => (v.rule !== "maxLength" && v.rule !== "minLength") || !formatted.has(v.path));
}

function article(type: string): string {
  const named = type
    .split(",")
    .map((t) =>
      t === "integer" ? "an integer" : t === "object" ? "an object" : t === "array" ? "an array" : `a ${t}`,
    );
  return named.join(" or ");
}
