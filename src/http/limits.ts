/** The largest request body, for every route but the batch ones. */
export const BODY_LIMIT = 1024 * 1024;

/** Documents per batch request, and the body they may fill (1,000 full sample invoices are 3 MiB). */
export const BATCH_MAX_DOCUMENTS = 1000;
export const BATCH_BODY_LIMIT = 32 * 1024 * 1024;
