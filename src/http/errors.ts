import { FORMAT_MESSAGES } from "./ajv.ts";

/** One violation of a rule, addressed by a JSON path such as `invoice_line[0].price.price_amount`. */
export type Violation = {
  path: string;
  rule: string;
  message: string;
  expected?: unknown;
  actual?: unknown;
  /** For rules across fields: the other fields the finding depends on. */
  related?: string[];
};

export const ERROR_STATUS = {
  unauthorized: 401,
  forbidden: 403,
  validation_failed: 400,
  irn_exists: 400,
  irn_invalid: 400,
  bad_request: 400,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  /** Another request with the same Idempotency-Key is still being processed. */
  in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** An Idempotency-Key sent again with another body or to another route. */
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  /** Signed and queued for the authority: a final answer, unlike the other 503s. */
  transmission_queued: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The most violations (or warnings) one answer lists: a document of 10,000 empty lines has 70,000,
 * and no one reads past the first few hundred. The answer says how many there were in all.
 */
export const MAX_VIOLATIONS = 200;

/**
 * The first `limit` findings of a list, and how many were found in all: the list's and `beyond`,
 * those counted where they were found but never listed.
 */
export function capViolations(
  list: readonly Violation[],
  limit = MAX_VIOLATIONS,
  beyond = 0,
): { shown: Violation[]; total: number } {
  return { shown: list.slice(0, limit), total: list.length + beyond };
}

export type DomainErrorOptions = {
  /** The envelope's `message`, fixed by the spec for each operation. */
  message: string;
  /** What went wrong, precisely enough for an integrator to fix it. */
  details: string;
  publicMessage?: string;
  violations?: Violation[];
  /** How many violations were found, when `violations` lists only the first of them. */
  violationsTotal?: number;
  /** Seconds, for 429 and 503. */
  retryAfter?: number;
};

/** The one error type services throw; the error mapper alone turns it into the spec's envelope. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details: string;
  readonly publicMessage: string | undefined;
  readonly violations: Violation[] | undefined;
  readonly violationsTotal: number | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, options: DomainErrorOptions) {
    super(options.message);
    this.name = "DomainError";
    this.code = code;
    this.details = options.details;
    this.publicMessage = options.publicMessage;
    this.violations = options.violations;
    this.violationsTotal = options.violationsTotal;
    this.retryAfter = options.retryAfter;
  }
}

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
  // for it is reported once, as not of the format.
  const formatted = new Set(out.filter((v) => v.rule === "format").map((v) => v.path));
  return formatted.size === 0 ? out : out.filter((v) => v.rule !== "maxLength" || !formatted.has(v.path));
}

function article(type: string): string {
  const named = type
    .split(",")
    .map((t) =>
      t === "integer" ? "an integer" : t === "object" ? "an object" : t === "array" ? "an array" : `a ${t}`,
    );
  return named.join(" or ");
}

/** A one-line summary naming the first violations, for `error.details`. */
export function summarize(violations: readonly Violation[], limit = 3, total = violations.length): string {
  const head = violations
    .slice(0, limit)
    .map((v) => `${v.path} ${v.message}`)
    .join("; ");
  const more = total > limit ? ` (and ${total - limit} more, see error.violations)` : "";
  return `${head}${more}`;
}
