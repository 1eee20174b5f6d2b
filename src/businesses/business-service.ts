import { createHmac, randomBytes, randomInt, randomUUID, timingSafeEqual } from "node:crypto";
import type { AuditLogRepository } from "../audit-log/audit-log-repository.ts";
import { type Db, writeTransaction } from "../db/database.ts";
import type { ApiKeyTable } from "../db/schema.ts";
import { DomainError } from "../errors.ts";
import { type ActiveKeys, REVOCATION_SETTLES_MS } from "./active-keys.ts";
import type { BusinessRepository } from "./business-repository.ts";
import { canonicalBusinessId } from "./ids.ts";

export const TIN_PATTERN = /^\d+-\d+$/;
export const SERVICE_ID_PATTERN = /^[A-Z0-9]{8}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SERVICE_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

export type Principal = { businessId: string; apiKey: string };

/**
 * Why credentials were refused: none usable (a key or secret missing or over-long), an API key no
 * active credential has, or an active key with the wrong secret. The rate limits count the last per
 * address and key, the others per address.
 */
export type AuthFailure = "no_credentials" | "unknown_key" | "wrong_secret";

/** How a credential appears in histories and the audit log: its key, never its secret. */
export const actorOf = (principal: Principal) => `key:${principal.apiKey}`;

export type NewBusiness = {
  name: string;
  tin: string;
  id?: string | undefined;
  serviceId?: string | undefined;
};

function invalid(details: string): DomainError {
  return new DomainError("invalid_request", { message: "Invalid request", details });
}

/**
 * Resolves REVOCATION_SETTLES_MS after `since` (a performance.now() reading), measured on the clock
 * the processes that keep credentials look at (a timer alone may fire a little early).
 */
async function settled(since: number): Promise<void> {
  for (let left = REVOCATION_SETTLES_MS; left > 0; left = since + REVOCATION_SETTLES_MS - performance.now()) {
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: each of its closures is one use case, none near the limit
export function businessService(deps: {
  db: Db;
  businesses: BusinessRepository;
  audit: Pick<AuditLogRepository, "append">;
  /** The active credentials authentication looks up (kept in memory where revocation stays exact). */
  activeKeys: Pick<ActiveKeys, "find" | "forget">;
  pepper: Buffer;
}) {
  const { db, businesses, audit, activeKeys, pepper } = deps;
  const hashSecret = (secret: string) => createHmac("sha256", pepper).update(secret, "utf8").digest();
  /**
   * The secret last verified against each row `activeKeys` keeps, as UTF-8: a request that presents
   * it again is compared with it (constant time) instead of hashed, which took 4% of a validate's
   * event loop. It lives as long as the kept row: a revocation, or a commit elsewhere that may
   * change a credential, drops the row (active-keys.ts) and the next request is hashed again. A row
   * read afresh (one not kept) never matches. Held in this process's memory only, where every request's
   * secret passes anyway; a wrong secret is always hashed.
   */
  const verified = new WeakMap<ApiKeyTable, Buffer>();

  return {
    async add(input: NewBusiness, actor = "cli") {
      const name = input.name.trim();
      if (name === "") throw invalid("name must not be empty");
      if (!TIN_PATTERN.test(input.tin))
        throw invalid(`tin '${input.tin}' must be digits, a hyphen, digits (e.g. 12345678-0001)`);
      if (input.id !== undefined && !UUID_PATTERN.test(input.id))
        throw invalid(`id '${input.id}' must be a UUID`);
      if (input.serviceId !== undefined && !SERVICE_ID_PATTERN.test(input.serviceId)) {
        throw invalid(`service id '${input.serviceId}' must be 8 uppercase letters or digits`);
      }
      return writeTransaction(db, async (tx) => {
        const id = input.id === undefined ? randomUUID() : canonicalBusinessId(input.id);
        if (await businesses.findById(id, tx)) throw invalid(`a business with id ${id} already exists`);
        let serviceId = input.serviceId;
        if (serviceId !== undefined) {
          if (await businesses.findByServiceId(serviceId, tx))
            throw invalid(`service id ${serviceId} is already taken`);
        } else {
          do {
            serviceId = Array.from(
              { length: 8 },
              () => SERVICE_ID_ALPHABET[randomInt(SERVICE_ID_ALPHABET.length)],
            ).join("");
          } while (await businesses.findByServiceId(serviceId, tx));
        }
        const row = {
          id,
          name,
          tin: input.tin,
          service_id: serviceId,
          certificate: randomBytes(24).toString("base64"),
          created_at: new Date().toISOString(),
        };
        await businesses.insert(row, tx);
        await audit.append(
          {
            at: row.created_at,
            actor,
            action: "business.created",
            business_id: row.id,
            subject: row.id,
            detail: { name, tin: input.tin, service_id: serviceId },
          },
          tx,
        );
        return {
          business_id: row.id,
          service_id: row.service_id,
          name: row.name,
          tin: row.tin,
          created_at: row.created_at,
        };
      });
    },

    async createKey(id: string, actor = "cli") {
      const businessId = canonicalBusinessId(id);
      if (!(await businesses.findById(businessId))) throw invalid(`business ${businessId} does not exist`);
      const apiKey = `ak_${randomBytes(16).toString("hex")}`;
      const apiSecret = `sk_${randomBytes(32).toString("base64url")}`;
      const createdAt = new Date().toISOString();
      await writeTransaction(db, async (tx) => {
        await businesses.insertKey(
          {
            api_key: apiKey,
            business_id: businessId,
            secret_hash: hashSecret(apiSecret).toString("hex"),
            created_at: createdAt,
            revoked_at: null,
          },
          tx,
        );
        await audit.append(
          { at: createdAt, actor, action: "key.created", business_id: businessId, subject: apiKey },
          tx,
        );
      });
      return { api_key: apiKey, api_secret: apiSecret, business_id: businessId, created_at: createdAt };
    },

    async revokeKey(apiKey: string, actor = "cli") {
      const key = await businesses.findKey(apiKey);
      if (!key) throw invalid(`API key ${apiKey} does not exist`);
      const revokedAt = key.revoked_at ?? new Date().toISOString();
      if (!key.revoked_at) {
        await writeTransaction(db, async (tx) => {
          await businesses.revokeKey(apiKey, revokedAt, tx);
          await audit.append(
            { at: revokedAt, actor, action: "key.revoked", business_id: key.business_id, subject: apiKey },
            tx,
          );
        });
      }
      // Before the answer: the key fails from the very next request, in this process at once, in
      // the others once they have looked at the database since (active-keys.ts).
      // (Revoked before, perhaps by a process that stopped before it answered: waited for all the same.)
      activeKeys.forget(apiKey);
      await settled(performance.now());
      return { api_key: apiKey, business_id: key.business_id, revoked_at: revokedAt };
    },

    /** A revoked key fails on the very next request, whichever process revoked it (active-keys.ts). */
    async authenticate(
      apiKey: string | undefined,
      apiSecret: string | undefined,
    ): Promise<Principal | AuthFailure> {
      if (!apiKey || !apiSecret || apiKey.length > 200 || apiSecret.length > 200) return "no_credentials";
      const key = await activeKeys.find(apiKey);
      const known = key && verified.get(key);
      if (known) {
        const given = Buffer.from(apiSecret, "utf8");
        if (given.length === known.length && timingSafeEqual(given, known)) {
          return { businessId: key.business_id, apiKey };
        }
      }
      const presented = hashSecret(apiSecret);
      // Compare even when the key is unknown, so timing does not tell which keys exist (API keys are
      // not secret: the answer to a caller past its failure limit tells it anyway).
      const stored = key ? Buffer.from(key.secret_hash, "hex") : Buffer.alloc(presented.length);
      const match = stored.length === presented.length && timingSafeEqual(stored, presented);
      if (!key) return "unknown_key";
      if (!match) return "wrong_secret";
      verified.set(key, Buffer.from(apiSecret, "utf8"));
      return { businessId: key.business_id, apiKey };
    },

    find: (id: string) => businesses.findById(canonicalBusinessId(id)),
    list: () => businesses.list(),
    keys: (businessId: string) => businesses.keysOf(canonicalBusinessId(businessId)),
    count: () => businesses.count(),
  };
}

export type BusinessService = ReturnType<typeof businessService>;
