import { FROM_ELSEWHERE, MAPPING } from "./mapping.ts";

const cell = (text: string) => text.replaceAll("|", "\\|");

/** The mapping as the markdown table of the UBL guide (docs/ubl.md), which a test keeps equal to it. */
export function mappingMarkdown(): string {
  const rows = MAPPING.flatMap((group) => [
    `| **${cell(group.bg)}** | **\`${cell(group.ubl)}\`** | **\`${cell(group.field)}\`** | |`,
    ...group.rows.map(
      (row) =>
        `| ${cell(row.bt)} | \`${cell(row.ubl)}\` | ${row.field ? `\`${cell(row.field)}\`` : "—"} | ${cell(row.refuse ? `refused when present and not zero: ${row.refuse}` : (row.note ?? ""))} |`,
    ),
  ]);
  const elsewhere = FROM_ELSEWHERE.map((f) => `| \`${f.field}\` | ${cell(f.from)} |`);
  return [
    "| EN 16931 | UBL 2.1 | this API's field | how |",
    "|---|---|---|---|",
    ...rows,
    "",
    "| field | where it comes from |",
    "|---|---|",
    ...elsewhere,
  ].join("\n");
}
