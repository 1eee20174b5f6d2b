import os from "node:os";
import type { Config } from "../config.ts";
import { pdfRenderer } from "../documents/pdf/pool.ts";
import { loadUblSchemas } from "../documents/ubl/schema.ts";
import { ublReadPool } from "../documents/ubl/ubl-read-pool.ts";
import { validationPool } from "../documents/validation/validation-pool.ts";
import { qrImageReader } from "../qr/qr-reader-pool.ts";

/**
 * The threads that read, check and render documents: large invoices checked, PDFs rendered, UBL
 * bodies read, QR images decoded. Each is started by its first job, on a thread of its own wherever
 * there is another core to run it on (in place on one core), and stopped with the service.
 */
export function documentThreads(config: Config) {
  const thread = os.availableParallelism() > 1;
  const validations = validationPool({ thread });
  const pdfs = pdfRenderer({ thread });
  // A folder given that holds no schemas stops start-up: they are compiled once here to say so, and
  // by the UBL thread for its own use.
  if (config.ublSchemas) loadUblSchemas(config.ublSchemas).dispose();
  const ubl = ublReadPool({ thread, schemas: config.ublSchemas });
  const qrImages = qrImageReader();
  return {
    validations,
    pdfs,
    ubl,
    qrImages,
    async close() {
      await validations.close();
      await qrImages.close();
      await pdfs.close();
      await ubl.close();
    },
  };
}
