/**
 * A business id as stored and answered: lower case. UUIDs compare case-insensitively (RFC 9562), and
 * clients upper-case them; every id a client or an operator gives goes through here before it is
 * compared or looked up.
 */
export const canonicalBusinessId = (id: string) => id.toLowerCase();
