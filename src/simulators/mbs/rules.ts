// Switches for what the MBS spec leaves [unknown] or disputed (its section 8). Each default is the
// reading the evidence favours, and docs/authority.md lists them; a test turns one on or off with
// `startMbsSimulator({ rules: {...} })`, `setRules(...)`, or `simulate mbs --rules name=value,...`.

export type Rules = {
  /** [client] disputed: `price_unit` at most 3 characters. Off: the authority's examples send "NGN per 1" [doc]. */
  price_unit_limit: boolean;
  /** [client] `invoice_kind` (B2B, B2C, B2G) required; absent from the collection [doc]. Off. */
  invoice_kind_required: boolean;
  /** [recorded] as a summary only: the supplier's `postal_address_id` required; the sign example sends an address [doc]. Off. */
  supplier_postal_address_id_required: boolean;
  /** [client] a line's `item.description` required (quoted refused; one APP's schema says optional). On. */
  item_description_required: boolean;
  /** [client] a party's `business_description`, when given, at least 5 characters. On. */
  business_description_min: boolean;
  /** [unknown] the IRN's date part equal to `issue_date`; the authority's own example breaks it [doc]. Off. */
  irn_date_is_issue_date: boolean;
  /** [doc] `CANCELED` a payment status; whether it still works is [unknown]. On. */
  canceled: boolean;
  /** [unknown] the status `confirm/{IRN}` answers for an IRN not registered: 404 or 400. 404. */
  confirm_unregistered: 400 | 404;
  /** [recorded] the documented VAT path `/v1/vat/postPayment` answered the no-route 404. Off: it still does. */
  documented_vat_path: boolean;
  /** [client] `validate` of a registered IRN answers as a repeated sign does (an integrator's fixture). Off. */
  duplicate_at_validate: boolean;
  /**
   * [unknown] the shape of `transmit/pull`'s `data` ([doc] the endpoint and its query; no answer is
   * shown). `list` (assumed, the default): a list of transmission records, each with the invoice's
   * `document`; `documents`: a bare list of the documents; `items`: an object `{items: [records]}`.
   */
  pull_shape: PullShape;
};

/** The answers of `pull` a connector must tolerate (the `pull_shape` rule). */
export const PULL_SHAPES = ["list", "documents", "items"] as const;
export type PullShape = (typeof PULL_SHAPES)[number];

export const DEFAULT_RULES: Readonly<Rules> = Object.freeze({
  price_unit_limit: false,
  invoice_kind_required: false,
  supplier_postal_address_id_required: false,
  item_description_required: true,
  business_description_min: true,
  irn_date_is_issue_date: false,
  canceled: true,
  confirm_unregistered: 404,
  documented_vat_path: false,
  duplicate_at_validate: false,
  pull_shape: "list",
});

export const RULE_NAMES = Object.keys(DEFAULT_RULES) as (keyof Rules)[];

export class RuleSpecError extends Error {}

const ON = new Set(["on", "true", "1", "yes"]);
const OFF = new Set(["off", "false", "0", "no"]);

function ruleValue(name: keyof Rules, value: string, part: string): Rules[keyof Rules] {
  if (name === "confirm_unregistered") {
    if (value === "400" || value === "404") return Number(value) as 400 | 404;
    throw new RuleSpecError(`invalid --rules part "${part}": confirm_unregistered is 404 or 400`);
  }
  if (name === "pull_shape") {
    if ((PULL_SHAPES as readonly string[]).includes(value)) return value as PullShape;
    throw new RuleSpecError(`invalid --rules part "${part}": pull_shape is ${PULL_SHAPES.join(", ")}`);
  }
  const lower = value.toLowerCase();
  if (ON.has(lower)) return true;
  if (OFF.has(lower)) return false;
  throw new RuleSpecError(`invalid --rules part "${part}": ${name} is on or off`);
}

/**
 * `name=value` pairs separated by commas, e.g. `price_unit_limit=on,confirm_unregistered=400`: a
 * switch is on/off (or true/false, 1/0, yes/no), `confirm_unregistered` 404 or 400, `pull_shape`
 * list, documents or items. Empty means the
 * defaults. The error names the part that is wrong.
 */
export function parseRules(text: string | undefined): Partial<Rules> {
  const rules: Partial<Record<keyof Rules, unknown>> = {};
  if (text === undefined || text.trim() === "") return {};
  for (const raw of text.split(",")) {
    const part = raw.trim();
    const [name, value, extra] = part.split("=").map((s) => s.trim());
    if (!name || value === undefined || value === "" || extra !== undefined) {
      throw new RuleSpecError(`invalid --rules part "${part}": expected name=value`);
    }
    if (!(RULE_NAMES as string[]).includes(name)) {
      throw new RuleSpecError(
        `invalid --rules part "${part}": unknown rule ${name} (known: ${RULE_NAMES.join(", ")})`,
      );
    }
    if (name in rules) throw new RuleSpecError(`invalid --rules part "${part}": ${name} is given twice`);
    rules[name as keyof Rules] = ruleValue(name as keyof Rules, value, part);
  }
  return rules as Partial<Rules>;
}

/** The defaults with `changes` applied; a change of an unknown name or of the wrong type is refused. */
export function withRules(base: Readonly<Rules>, changes: Partial<Rules> = {}): Rules {
  const next: Rules = { ...base };
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (!(RULE_NAMES as string[]).includes(name)) {
      throw new RuleSpecError(`unknown rule ${name} (known: ${RULE_NAMES.join(", ")})`);
    }
    const [fits, expected] =
      name === "confirm_unregistered"
        ? [value === 400 || value === 404, "404 or 400"]
        : name === "pull_shape"
          ? [(PULL_SHAPES as readonly unknown[]).includes(value), PULL_SHAPES.join(", ")]
          : [typeof value === "boolean", "true or false"];
    if (!fits) throw new RuleSpecError(`invalid rule ${name}: ${expected}`);
    (next as Record<string, unknown>)[name] = value;
  }
  return next;
}
