import { type SelectQueryBuilder, sql } from "kysely";
import { type Db, type Executor, engineOf } from "../db/database.ts";
import type { Database, ProductTable, ServiceTable } from "../db/schema.ts";

// The 21 sections of the Harmonized System.
const HS_SECTIONS = new Set(
  "I II III IV V VI VII VIII IX X XI XII XIII XIV XV XVI XVII XVIII XIX XX XXI".split(" "),
);

export type Page = { start: number; length: number };
export type ProductFilter = {
  hscode?: string;
  description?: string;
  product_category?: string;
  search?: string;
};
export type ServiceFilter = { code?: string; description?: string; search?: string };

/** `LIKE` pattern matching `text` literally, case-insensitively on both engines (callers lower-case). */
function contains(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
function prefix(text: string): string {
  return `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Digits of an HS code as the user typed it (`2523`, `2523.29`, `252329`) → a prefix of `XXXX.XX`. */
function hsPrefix(input: string): string {
  const digits = input.replace(/\D/g, "");
  return digits.length <= 4 ? digits : `${digits.slice(0, 4)}.${digits.slice(4)}`;
}

function likeEscaped(column: string, pattern: string) {
  return sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
}

/**
 * Products whose description contains `text`, case-insensitively. On SQLite the trigram index
 * narrows the rows first (it needs three characters); the LIKE keeps the exact meaning either way.
 * On PostgreSQL the trigram index, when there is one, serves the LIKE itself.
 */
function descriptionContains(db: Executor, text: string) {
  const like = likeEscaped("description", contains(text));
  if (engineOf(db) !== "sqlite" || [...text].length < 3) return like;
  const phrase = `"${text.replaceAll('"', '""')}"`;
  return sql<boolean>`(products.rowid in (select rowid from product_trigrams where product_trigrams match ${phrase}) and ${like})`;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a repository: one short closure per statement
export function catalogRepository(db: Db) {
  function productWhere(query: SelectQueryBuilder<Database, "products", object>, f: ProductFilter) {
    let q = query;
    if (f.hscode) q = q.where("hscode", "like", prefix(hsPrefix(f.hscode)));
    if (f.description) {
      const text = f.description;
      q = q.where(() => descriptionContains(db, text));
    }
    if (f.product_category) {
      // A section (roman numeral) or chapter (two digits) code matches exactly; other text matches
      // words of the category name.
      const category = f.product_category.trim();
      if (HS_SECTIONS.has(category.toUpperCase())) q = q.where("section", "=", category.toUpperCase());
      else if (/^\d{1,2}$/.test(category)) q = q.where("chapter", "=", category.padStart(2, "0"));
      else {
        const pattern = contains(category);
        q = q.where(() => likeEscaped("product_category", pattern));
      }
    }
    if (f.search) {
      const text = f.search;
      const digits = f.search.replace(/\D/g, "");
      q = q.where((eb) =>
        eb.or([
          descriptionContains(db, text),
          ...(digits.length >= 2 ? [eb("hscode", "like", prefix(hsPrefix(f.search as string)))] : []),
        ]),
      );
    }
    return q;
  }

  function serviceWhere(query: SelectQueryBuilder<Database, "services", object>, f: ServiceFilter) {
    let q = query;
    if (f.code) q = q.where("code", "like", prefix(f.code));
    if (f.description) {
      const pattern = contains(f.description);
      q = q.where(() => likeEscaped("description", pattern));
    }
    if (f.search) {
      const pattern = contains(f.search);
      const search = f.search;
      q = q.where((eb) => eb.or([likeEscaped("description", pattern), eb("code", "like", prefix(search))]));
    }
    return q;
  }

  const count = async (q: SelectQueryBuilder<Database, "products" | "services", object>) =>
    Number((await q.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n);

  return {
    async products(filter: ProductFilter, page: Page) {
      const base = db.selectFrom("products");
      const filtered = productWhere(base, filter);
      const [total, matching, rows] = await Promise.all([
        count(base),
        count(filtered),
        filtered
          .select(["hscode", "description", "product_category", "section", "chapter"])
          .orderBy("hscode")
          .offset(page.start)
          .limit(page.length)
          .execute(),
      ]);
      return { total, matching, rows };
    },

    async services(filter: ServiceFilter, page: Page) {
      return serviceWhere(db.selectFrom("services"), filter)
        .select(["code", "description", "service_category", "section", "division"])
        .orderBy("code")
        .offset(page.start)
        .limit(page.length)
        .execute();
    },

    /** Every code of the product catalog. */
    async productCodes(tx: Executor = db): Promise<string[]> {
      return (await tx.selectFrom("products").select("hscode").execute()).map((row) => row.hscode);
    },

    /**
     * Replaces a whole catalog in the caller's transaction: readers see the old one or the new one,
     * never a mix.
     */
    async replace(
      catalog:
        | { table: "products"; rows: readonly ProductTable[] }
        | { table: "services"; rows: readonly ServiceTable[] },
      tx: Executor,
      onProgress?: (done: number) => void,
    ): Promise<void> {
      const batch = 500;
      await tx.deleteFrom(catalog.table).execute();
      // The trigram index reads the products table but is not updated with it: rebuilt below.
      for (let i = 0; i < catalog.rows.length; i += batch) {
        if (catalog.table === "products") {
          await tx
            .insertInto("products")
            .values(catalog.rows.slice(i, i + batch))
            .execute();
        } else {
          await tx
            .insertInto("services")
            .values(catalog.rows.slice(i, i + batch))
            .execute();
        }
        onProgress?.(Math.min(i + batch, catalog.rows.length));
      }
      if (catalog.table === "products" && engineOf(tx) === "sqlite") {
        await sql`insert into product_trigrams (product_trigrams) values ('rebuild')`.execute(tx);
      }
    },
  };
}

export type CatalogRepository = ReturnType<typeof catalogRepository>;
