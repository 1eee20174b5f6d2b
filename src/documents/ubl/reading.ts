import type { Violation } from "../../errors.ts";
import type { Kind } from "./mapping.ts";
import type { UblNode } from "./tree.ts";

/**
 * The bookkeeping of one UBL document read into this API's document: which element each field came
 * from (so that a finding on the field names the element), which attributes were read, and what
 * could not be carried. The mapping (read.ts) says what goes where; this says where it was.
 */
export class Reading {
  /** This API's field path (as findings name it) → the XPath of the element it came from, or would. */
  readonly sources = new Map<string, string>();
  readonly readAttrs = new Set<string>();
  readonly warnings: Violation[] = [];
  readonly refusals: Violation[] = [];

  /** The first child named `name`, not marked (a look before deciding). */
  peek(node: UblNode | undefined, name: string): UblNode | undefined {
    return node?.children.find((c) => c.name === name);
  }

  /** The element at `rel` (`cac:A/cbc:B`) under `node`, each step marked as carried. */
  at(node: UblNode | undefined, rel: string): UblNode | undefined {
    let here = node;
    for (const step of stepsOf(rel)) {
      here = here?.children.find((c) => c.name === step);
      if (here) here.used = true;
    }
    return here;
  }

  /** Every child named `name`, marked as carried. */
  all(node: UblNode | undefined, name: string): UblNode[] {
    const found = node?.children.filter((c) => c.name === name) ?? [];
    for (const child of found) child.used = true;
    return found;
  }

  attr(node: UblNode, name: string): string | undefined {
    const value = node.attrs[name];
    if (value !== undefined) this.readAttrs.add(`${node.path}/@${name}`);
    return value;
  }

  /**
   * The value at `rel` under `node` as `kind`, put at `field` of `target` (a dotted path) and
   * recorded as the source of `at` (the field's full path). Absent: nothing is put, and the field's
   * would-be element is recorded, for a finding that it is missing.
   */
  put(
    target: Record<string, unknown>,
    field: string,
    at: string,
    node: UblNode | undefined,
    rel: string,
    kind: Kind,
  ) {
    const found = this.at(node, rel);
    this.sources.set(at, found?.path ?? `${node?.path ?? ""}/${rel}`);
    if (!found) return undefined;
    const value = this.convert(found, kind);
    if (value !== undefined) setPath(target, field, value);
    return value;
  }

  convert(node: UblNode, kind: Kind): unknown {
    const text = node.text;
    if (text === "") return undefined;
    switch (kind) {
      case "amount":
      case "number":
        // The schema has held it to xsd:decimal; a number here is what a JSON client would send.
        return Number(text);
      case "date": {
        const date = text.slice(0, 10);
        if (text.length > 10) this.dropped(node, `the time zone '${text.slice(10)}' of the date`);
        return date;
      }
      case "time": {
        const time = text.slice(0, 8);
        if (text.length > 8) this.dropped(node, `'${text.slice(8)}' of the time (fraction or offset)`);
        return time;
      }
      default:
        return text;
    }
  }

  /** Something read but not carried whole. */
  dropped(node: UblNode, what: string, why = "this API's document has no field for it"): void {
    this.warnings.push({
      path: "(ubl)",
      rule: "ubl_not_carried",
      message: `${what} is not carried: ${why}`,
      xpath: node.path,
    });
  }

  refuse(xpath: string, message: string, actual?: string): void {
    this.refusals.push({
      path: "(ubl)",
      rule: "ubl_cannot_carry",
      message,
      xpath,
      ...(actual !== undefined ? { actual } : {}),
    });
  }
}

/**
 * A relative path's steps, or a dotted field's keys. The paths are the mapping's few hundred
 * constants, split once each: splitting them again on every read was a tenth of a UBL read's time.
 */
const STEPS = new Map<string, string[]>();
const KEYS = new Map<string, string[]>();
function split(cache: Map<string, string[]>, path: string, by: string): string[] {
  let parts = cache.get(path);
  if (!parts) {
    parts = path.split(by);
    // Only constants are kept: a path with an index in it is built per document.
    if (cache.size < 1000 && !/\d/.test(path)) cache.set(path, parts);
  }
  return parts;
}
const stepsOf = (rel: string) => (rel.includes("/") ? split(STEPS, rel, "/") : [rel]);

export function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  if (!dotted.includes(".")) {
    target[dotted] = value;
    return;
  }
  const keys = split(KEYS, dotted, ".");
  let here = target;
  for (const key of keys.slice(0, -1)) {
    if (typeof here[key] !== "object" || here[key] === null) here[key] = {};
    here = here[key] as Record<string, unknown>;
  }
  here[keys[keys.length - 1] as string] = value;
}
