import { bidiControlsIn, hasBidiControl, showBidiControls } from "../../../bidi.ts";
import { MAX_VIOLATIONS, type Violation } from "../../../errors.ts";
import { isObject, type Rule } from "./types.ts";

/*
 * Bidirectional controls (U+202E and its kin, see src/bidi.ts) in any text of the document, field
 * names included: a warning, not an error. Arabic or Hebrew text may need the marks, and the document
 * is signed as sent (signed content is never changed); the dashboard, the verification page and the
 * PDF show each control as a visible marker. One finding per text, with the markers of the controls
 * it holds. The walk is iterative (an unknown field may nest as deep as the body allows) and visits
 * each value once: its cost is linear in the document.
 */

/** Where a container is: its step from its parent, and the parent's place. */
type Place = { step: string | number; up: Place | undefined };

/** The path of a place, as the other rules write it: `invoice_line[2].item.name`. */
function pathOf(place: Place): string {
  const steps: (string | number)[] = [];
  for (let at: Place | undefined = place; at !== undefined; at = at.up) steps.push(at.step);
  let path = "";
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i] as string | number;
    if (typeof step === "number") path += `[${step}]`;
    else {
      // A field name with a control is named with its markers: a path is shown to people too.
      const name = showBidiControls(step);
      path = path === "" ? name : `${path}.${name}`;
    }
  }
  return path;
}

/** What a finding says of a text (or, `ofName`, a field's name) holding these controls. */
function messageOf(markers: readonly string[], ofName: boolean): string {
  const one = markers.length === 1;
  return `${ofName ? "is a field whose name holds" : "holds"} ${
    one
      ? `a bidirectional control character (${markers[0]})`
      : `bidirectional control characters (${markers.join(", ")})`
  }, which can make the text read differently from what is stored. The invoice is signed as sent; the dashboard, the verification page and the PDF show each control as a visible marker such as ${markers[0]}. Remove ${one ? "it" : "them"} unless the text needs ${one ? "it" : "them"} (marks in Arabic or Hebrew text)`;
}

/**
 * The findings of one document. A message is made once per set of controls, and past
 * MAX_VIOLATIONS findings (more than an answer lists) the texts are only counted, into one last
 * finding: a body of a hundred thousand marked texts costs a pass, not a hundred thousand findings.
 */
function collector() {
  const out: Violation[] = [];
  const messages = new Map<string, string>();
  let unlisted: { path: string; more: number } | undefined;
  return {
    add(place: Place, text: string, ofName: boolean): void {
      if (out.length >= MAX_VIOLATIONS) {
        if (unlisted) unlisted.more++;
        else unlisted = { path: pathOf(place), more: 0 };
        return;
      }
      const markers = bidiControlsIn(text);
      const key = `${ofName ? "name" : "text"} ${markers.join("")}`;
      let message = messages.get(key);
      if (message === undefined) {
        message = messageOf(markers, ofName);
        messages.set(key, message);
      }
      out.push({ path: pathOf(place), rule: "bidi_control", message });
    },
    done(): Violation[] {
      if (unlisted) {
        out.push({
          path: unlisted.path,
          rule: "bidi_control",
          message: `holds bidirectional control characters, as do ${unlisted.more} more texts after it: the first ${MAX_VIOLATIONS} are named one by one, the rest only counted here`,
        });
      }
      return out;
    },
  };
}

/** A container being read: its members (the keys of an object), the next to read, and its place. */
type Frame = {
  value: readonly unknown[] | Record<string, unknown>;
  keys: readonly string[] | undefined;
  next: number;
  place: Place | undefined;
};

const frameOf = (value: object, place: Place | undefined): Frame | undefined =>
  Array.isArray(value)
    ? { value, keys: undefined, next: 0, place }
    : isObject(value)
      ? { value, keys: Object.keys(value), next: 0, place }
      : undefined;

export const bidiControls: Rule = {
  name: "bidi_control",
  severity: "warning",
  check(doc) {
    const found = collector();
    // Depth first with a stack of its own, so that the findings come in the document's order.
    const stack: Frame[] = [];
    const root = frameOf(doc, undefined);
    if (root) stack.push(root);
    for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
      const { value, keys, place: up } = frame;
      const size = keys === undefined ? (value as readonly unknown[]).length : keys.length;
      if (frame.next >= size) {
        stack.pop();
        continue;
      }
      const at = frame.next++;
      // A place is made only for a container or a finding: most values need none.
      const step = keys === undefined ? at : (keys[at] as string);
      const member =
        keys === undefined ? (value as readonly unknown[])[at] : (value as Record<string, unknown>)[step];
      if (typeof step === "string" && hasBidiControl(step)) found.add({ step, up }, step, true);
      if (typeof member === "string") {
        if (hasBidiControl(member)) found.add({ step, up }, member, false);
      } else if (typeof member === "object" && member !== null) {
        const below = frameOf(member, { step, up });
        if (below) stack.push(below);
      }
    }
    return found.done();
  },
};
