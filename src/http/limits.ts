/** The largest request body, for every route but the batch ones. */
export const BODY_LIMIT = 1024 * 1024;
