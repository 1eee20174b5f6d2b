import { createHash, generateKeyPair, randomBytes, randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { irnTemplate } from "./irn.ts";

/**
 * What the simulator prints and a test needs to sign as a taxpayer. [recorded] The entity id and the
 * business id are two different UUIDs: invoices name the business, `entity/{ENTITY_ID}` the entity.
 */
export type MbsTaxpayer = {
  entity_id: string;
  business_id: string;
  service_id: string;
  tin: string;
  name: string;
  /** [recorded] `{{invoice_id(e.g:INV00XXX)}}-<SERVICE_ID>-{{YYYYMMDD(e.g:20250629)}}`. */
  irn_template: string;
};

/** A taxpayer with what only the simulator's answers carry. */
export type Taxpayer = MbsTaxpayer & {
  /** The `id` of the taxpayer's log-in answer. */
  user_id: string;
  sector: string;
  email: string;
  password: string;
  certificate: string;
  /** The public key of the taxpayer's QR key pair, as PEM (served base64-encoded). */
  publicKeyPem: () => Promise<string>;
  created_at: string;
};

export type Credentials = { api_key: string; api_secret: string; user_id: string };

const NAMES = [
  "Adaeze Textiles Ltd",
  "Balogun Agro Foods Ltd",
  "Chinedu Electricals Ltd",
  "Danjuma Haulage Ltd",
  "Efe Pharmacy Ltd",
  "Funmilayo Print Works Ltd",
  "Garba Grains Ltd",
  "Halima Solar Ltd",
  "Ifeanyi Cement Depot Ltd",
  "Jumoke Catering Services Ltd",
];

/** The entity answer's `sector` of each name above, in the same order [client: the field; values ours]. */
const SECTORS = [
  "Manufacturing",
  "Agriculture",
  "Wholesale and Retail Trade",
  "Transportation and Storage",
  "Human Health",
  "Manufacturing",
  "Wholesale and Retail Trade",
  "Electricity and Energy",
  "Wholesale and Retail Trade",
  "Accommodation and Food Services",
];

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

function digest(seed: number, ...parts: (string | number)[]): Buffer {
  return createHash("sha256")
    .update(["mbs-simulator", seed, ...parts].join("\u0000"))
    .digest();
}

/** A version 4 UUID, lower case, whose random bits come from the digest. */
function uuidFrom(bytes: Buffer): string {
  const b = Buffer.from(bytes.subarray(0, 16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function uuidOf(seed: number, ...parts: (string | number)[]): string {
  return uuidFrom(digest(seed, ...parts));
}

/**
 * The APP credential. From the seed (`from: "seed"`, when one is given explicitly) the same seed
 * gives the same key and secret, so scripts can be repeated; otherwise the key and secret are random,
 * as a default seed would make them guessable by anyone who can reach the simulator. The user id is
 * no secret: it follows the seed either way.
 */
export function credentialsOf(seed: number, from: "seed" | "random"): Credentials {
  return {
    api_key: from === "seed" ? uuidOf(seed, "api_key") : randomUUID(),
    api_secret: (from === "seed" ? digest(seed, "api_secret") : randomBytes(32)).toString("hex"),
    user_id: uuidOf(seed, "user_id"),
  };
}

/**
 * Each taxpayer signs in (`utilities/authenticate`) with `<service id, lower case>@mbs-simulator.test`
 * and its TIN as the password: both follow from the printed line, which carries no password.
 */
export function taxpayerLogin(taxpayer: Pick<MbsTaxpayer, "service_id" | "tin">) {
  return { email: `${taxpayer.service_id.toLowerCase()}@mbs-simulator.test`, password: taxpayer.tin };
}

/** The printed part of `count` taxpayers, derived from the seed alone; ids, service ids and TINs differ. */
export function taxpayersOf(seed: number, count: number): MbsTaxpayer[] {
  const offset = digest(seed, "names").readUInt8(0) % NAMES.length;
  const used = new Set<string>();
  const out: MbsTaxpayer[] = [];
  for (let i = 0; out.length < count; i++) {
    const bytes = digest(seed, "taxpayer", i);
    const service_id = [...bytes.subarray(16, 24)].map((b) => ALPHANUMERIC[b % 36]).join("");
    const tin = `${10_000_000 + (bytes.readUInt32BE(24) % 90_000_000)}-${String(out.length + 1).padStart(4, "0")}`;
    // A clash is astronomically rare; skipping keeps the guarantee without a second scheme.
    if (used.has(service_id) || used.has(tin.slice(0, 8))) continue;
    used.add(service_id);
    used.add(tin.slice(0, 8));
    const round = Math.floor(out.length / NAMES.length);
    const name = `${NAMES[(offset + out.length) % NAMES.length]}${round > 0 ? ` ${round + 1}` : ""}`;
    out.push({
      entity_id: uuidOf(seed, "entity", i),
      business_id: uuidFrom(bytes),
      service_id,
      tin,
      name,
      irn_template: irnTemplate(service_id),
    });
  }
  return out;
}

const rsaKeyPair = promisify(generateKeyPair);

/**
 * A taxpayer's QR public key, generated when first asked for, then kept. An RSA 2048 key pair costs
 * 0.2 to 0.4 s of CPU; a simulator has 4 taxpayers by default and up to 100, and most of its runs
 * never serve a key: generated at start, the keys were most of what starting a simulator cost.
 */
function publicKeyOnDemand(): () => Promise<string> {
  let key: Promise<string> | undefined;
  return () =>
    (key ??= rsaKeyPair("rsa", { modulusLength: 2048 }).then(({ publicKey }) =>
      publicKey.export({ type: "spki", format: "pem" }).toString(),
    ));
}

/** The taxpayers, each with its QR key pair to come (see publicKeyOnDemand). */
export function createTaxpayers(seed: number, count: number): Taxpayer[] {
  return taxpayersOf(seed, count).map((t, i) => ({
    ...t,
    ...taxpayerLogin(t),
    user_id: uuidOf(seed, "user", i),
    sector: SECTORS[NAMES.findIndex((n) => t.name.startsWith(n))] ?? "Other Services",
    certificate: digest(seed, "certificate", i).toString("base64"),
    publicKeyPem: publicKeyOnDemand(),
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
  }));
}
