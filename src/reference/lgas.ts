import { states as packageStates } from "nigerian-states-and-lgas/lib/states.js";
import { STATES } from "./data.ts";

export type Lga = { name: string; code: string; state_code: string };

// The package spells two states differently from the spec's list.
const STATE_ALIASES: Record<string, string> = {
  Kastina: "Katsina",
  "Federal Capital Territory": "Abuja Federal Capital Territory",
};

/**
 * Provisional LGA codes `NG-{state}-{XYZ}`, derived from the name because no complete official list
 * is published. The rule reproduces the known real codes (Aba North NG-AB-ANO, Aba South NG-AB-ASO,
 * Arochukwu NG-AB-ARO, Bende NG-AB-BEN):
 * - one word: its first three letters;
 * - two words: the first letter of the first word and the first two of the second;
 * - three or more words: the first letter of each of the first three words.
 * Words are split on spaces, hyphens and slashes; letters only. Within a state, LGAs are taken in
 * alphabetical order and a code already used is replaced by the first free combination of the first
 * letter with two later letters of the name, in order.
 */
export function lgaCode(name: string, taken: ReadonlySet<string>): string {
  const words = name
    .toUpperCase()
    .split(/[\s/-]+/)
    .map((w) => w.replace(/[^A-Z]/g, ""))
    .filter((w) => w.length > 0);
  const letters = words.join("");
  const [w1 = "", w2 = "", w3 = ""] = words;
  let preferred: string;
  if (words.length === 1) preferred = letters.slice(0, 3);
  else if (words.length === 2) preferred = (w1.slice(0, 1) + w2.slice(0, 2) + letters).slice(0, 3);
  else preferred = w1.slice(0, 1) + w2.slice(0, 1) + w3.slice(0, 1);
  if (!taken.has(preferred)) return preferred;
  for (let i = 1; i < letters.length; i++) {
    for (let j = i + 1; j < letters.length; j++) {
      const candidate = `${letters[0]}${letters[i]}${letters[j]}`;
      if (!taken.has(candidate)) return candidate;
    }
  }
  throw new Error(`no free LGA code for ${name}`);
}

function buildLgas(): Lga[] {
  const byName = new Map(packageStates.map((s) => [STATE_ALIASES[s.state] ?? s.state, s.lgas]));
  return STATES.flatMap((state) => {
    const names = byName.get(state.name);
    if (!names) throw new Error(`no LGAs for state ${state.name}`);
    const taken = new Set<string>();
    return [...names]
      .sort((a, b) => a.localeCompare(b, "en"))
      .map((name) => {
        const suffix = lgaCode(name, taken);
        taken.add(suffix);
        return { name, code: `${state.code}-${suffix}`, state_code: state.code };
      });
  });
}

export const LGAS: readonly Lga[] = buildLgas();
