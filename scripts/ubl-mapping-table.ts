// Writes the UBL mapping table of docs/ubl.md from the code's (src/documents/ubl/mapping.ts), between
// its markers: `npm run docs:ubl`. A test keeps the two equal.
import fs from "node:fs";
import { mappingMarkdown } from "../src/documents/ubl/mapping-table.ts";

const file = new URL("../docs/ubl.md", import.meta.url);
const text = fs.readFileSync(file, "utf8");
fs.writeFileSync(
  file,
  text.replace(
    /<!-- mapping:start -->[\s\S]*<!-- mapping:end -->/,
    `<!-- mapping:start -->\n${mappingMarkdown()}\n<!-- mapping:end -->`,
  ),
);
