import { codeLists } from "./code-lists.ts";
import { irnTemplate } from "./irn.ts";
import type { Rule } from "./types.ts";

export const INVOICE_RULES: readonly Rule[] = [codeLists, irnTemplate];
