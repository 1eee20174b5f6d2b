import fs from "node:fs";
import { parse } from "csv-parse/sync";
import type { ProductTable, ServiceTable } from "../db/schema.ts";

type HsRow = { section: string; hscode: string; description: string; parent: string; level: string };

/**
 * Reads the HS 2022 nomenclature CSV (`section,hscode,description,parent,level`) and keeps the
 * six-digit subheadings as `XXXX.XX`; their category is the HS chapter they belong to.
 */
export function readHsProducts(file: string): ProductTable[] {
  const rows = parse(fs.readFileSync(file), {
    columns: true,
    bom: true,
    skip_empty_lines: true,
    trim: true,
  }) as HsRow[];
  if (rows.length === 0 || !("hscode" in (rows[0] as object)) || !("level" in (rows[0] as object))) {
    throw new Error(`${file}: expected the HS CSV columns section,hscode,description,parent,level`);
  }
  const chapters = new Map(rows.filter((r) => r.level === "2").map((r) => [r.hscode, r.description]));
  const products: ProductTable[] = [];
  for (const r of rows) {
    if (r.level !== "6") continue;
    if (!/^\d{6}$/.test(r.hscode)) throw new Error(`${file}: subheading '${r.hscode}' is not six digits`);
    const chapter = r.hscode.slice(0, 2);
    products.push({
      hscode: `${r.hscode.slice(0, 4)}.${r.hscode.slice(4)}`,
      description: r.description,
      section: r.section,
      chapter,
      product_category: chapters.get(chapter) ?? `Chapter ${chapter}`,
    });
  }
  if (products.length === 0) throw new Error(`${file}: no six-digit subheadings found`);
  return products;
}

type IsicFile = {
  sections: {
    section: string;
    description: string;
    divisions: {
      division: string;
      description: string;
      groups: { group: string; description: string; classes: { class: string; description: string }[] }[];
    }[];
  }[];
};

/** Reads ISIC Rev.4 (sections › divisions › groups › classes) and keeps the four-digit classes. */
export function readIsicServices(file: string): ServiceTable[] {
  const data = JSON.parse(fs.readFileSync(file, "utf8")) as IsicFile;
  if (!Array.isArray(data.sections)) throw new Error(`${file}: expected an ISIC JSON object with 'sections'`);
  const services: ServiceTable[] = [];
  for (const section of data.sections) {
    for (const division of section.divisions ?? []) {
      for (const group of division.groups ?? []) {
        for (const cls of group.classes ?? []) {
          if (!/^\d{4}$/.test(cls.class)) throw new Error(`${file}: class '${cls.class}' is not four digits`);
          services.push({
            code: cls.class,
            description: cls.description,
            section: section.section.toUpperCase(),
            division: division.division,
            service_category: division.description,
          });
        }
      }
    }
  }
  if (services.length === 0) throw new Error(`${file}: no ISIC classes found`);
  return services;
}
