import { type Db, writeTransaction } from "../db/database.ts";
import { readHsProducts, readIsicServices } from "./catalog-import.ts";
import type { CatalogRepository, Page, ProductFilter, ServiceFilter } from "./catalog-repository.ts";
import { CURRENCIES } from "./currencies.ts";
import { INVOICE_TYPES, PAYMENT_MEANS, STATES, TAX_CATEGORIES, UNITS } from "./data.ts";
import { LGAS } from "./lgas.ts";
import type { ProductCodes } from "./product-codes.ts";

export function referenceService(deps: {
  db: Db;
  catalog: CatalogRepository;
  /** Told when this process imports a product catalog. */
  productCodes?: Pick<ProductCodes, "forget">;
}) {
  const { db, catalog } = deps;
  return {
    currencies: () => CURRENCIES,
    invoiceTypes: () => INVOICE_TYPES,
    paymentMeans: () => PAYMENT_MEANS,
    taxCategories: () => TAX_CATEGORIES,
    lgas: () => LGAS,
    states: () => STATES,
    units: () => UNITS,

    async products(filter: ProductFilter, page: Page) {
      const { total, matching, rows } = await catalog.products(filter, page);
      return {
        recordsTotal: total,
        recordsFiltered: matching,
        data: rows.map((r) => ({
          hscode: r.hscode,
          description: r.description,
          product_category: r.product_category,
        })),
      };
    },

    async services(filter: ServiceFilter, page: Page) {
      const rows = await catalog.services(filter, page);
      return rows.map((r) => ({
        code: r.code,
        description: r.description,
        service_category: r.service_category,
      }));
    },

    async importProducts(file: string, onProgress?: (done: number, total: number) => void) {
      const rows = readHsProducts(file);
      await writeTransaction(db, (tx) =>
        catalog.replace({ table: "products", rows }, tx, (done) => onProgress?.(done, rows.length)),
      );
      deps.productCodes?.forget();
      return { catalog: "products", imported: rows.length };
    },

    async importServices(file: string, onProgress?: (done: number, total: number) => void) {
      const rows = readIsicServices(file);
      await writeTransaction(db, (tx) =>
        catalog.replace({ table: "services", rows }, tx, (done) => onProgress?.(done, rows.length)),
      );
      return { catalog: "services", imported: rows.length };
    },
  };
}

export type ReferenceService = ReturnType<typeof referenceService>;
