/** Documents per batch request, and the body they may fill (1,000 full sample invoices are 3 MiB). */
export const BATCH_MAX_DOCUMENTS = 1000;
export const BATCH_BODY_LIMIT = 32 * 1024 * 1024;

/**
 * Invoice lines across the documents of one batch request: checking a line costs about 10 µs, so a
 * batch's checks stay near half a second (1,000 documents of 50 lines). Each document alone may
 * still hold up to 10,000 lines.
 */
export const BATCH_MAX_LINES = 50_000;

/**
 * Violations and warnings listed per document of a batch's answer (each with its total): 1,000
 * documents with 200 each would make an answer of 20 MB.
 */
export const BATCH_FINDINGS_PER_DOCUMENT = 20;
