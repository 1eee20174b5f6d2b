/**
 * In-process benchmark of the cryptography: the signing step alone (RFC 8785 canonical JSON,
 * SHA-256, Ed25519) over the full sample invoice, and QR validation (RSA PKCS#1 v1.5 decryption
 * plus the registry lookups) on a real SQLite database.
 *   npm run bench:signing
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { loadConfig } from "../src/config.ts";
import { generatePrivateKey } from "../src/crypto/keyring.ts";
import { createSigner } from "../src/crypto/signer.ts";
import { createContext, createServer } from "../src/main.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const shared = path.resolve(process.env.EINVOICE_SHARED_DIR ?? path.join(root, "..", "shared"));

function rate(label: string, seconds: number, work: () => void | Promise<void>) {
  return (async () => {
    for (let i = 0; i < 200; i++) await work();
    let count = 0;
    const end = performance.now() + seconds * 1000;
    const start = performance.now();
    while (performance.now() < end) {
      await work();
      count += 1;
    }
    const perSecond = count / ((performance.now() - start) / 1000);
    console.log(
      `${label.padEnd(44)} ${Math.round(perSecond).toLocaleString("en-US").padStart(9)} /s   (${count} in ${seconds} s)`,
    );
  })();
}

console.log(
  `node ${process.version}, ${os.cpus()[0]?.model ?? "unknown cpu"} × ${os.cpus().length}, one thread`,
);

const business = { business_id: "5b7d3d2e-8f7a-4c1e-9b1a-2f8e6c4d1a00", service_id: "AB12CD34" };
const document = JSON.parse(
  fs
    .readFileSync(path.join(shared, "fixtures", "invoice-full.json"), "utf8")
    .replaceAll("{{BUSINESS_ID}}", business.business_id)
    .replaceAll("{{SERVICE_ID}}", business.service_id),
) as Record<string, unknown>;

const signer = createSigner([generatePrivateKey("ed25519")]);
let previous: string | null = null;
await rate("sign (canonical JSON + SHA-256 + Ed25519)", 3, () => {
  const signature = signer.sign({
    irn: String(document.irn),
    business_id: business.business_id,
    signed_at: new Date().toISOString(),
    previous_hash: previous,
    document,
  });
  previous = signature.hash;
});

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-bench-"));
const ctx = await createContext(
  loadConfig({ EINVOICE_DATABASE_URL: `sqlite:${path.join(dir, "bench.db")}`, EINVOICE_LOG_LEVEL: "silent" }),
);
const app = await createServer(ctx, pino({ level: "silent" }));
const added = await ctx.businesses.add({
  name: "Bench Ltd",
  tin: "12345678-0001",
  serviceId: business.service_id,
  id: business.business_id,
});
const key = await ctx.businesses.createKey(added.business_id);
const signed = await app.inject({
  method: "POST",
  url: "/api/v1/einvoice/sign",
  headers: { "api-key": key.api_key, "api-secret": key.api_secret },
  payload: document,
});
if (signed.statusCode !== 200) throw new Error(signed.body);
const record = (
  await app.inject({
    url: `/api/v1/einvoice/${String(document.irn)}`,
    headers: { "api-key": key.api_key, "api-secret": key.api_secret },
  })
).json() as { data: { qr_code: string } };

await rate("QR open (RSA-2048 raw + PKCS#1 v1.5 unpad + implicit rejection + parse)", 3, () => {
  ctx.qr.open(record.data.qr_code);
});
await rate("QR validate (decrypt + certificate + IRN lookup)", 3, async () => {
  await ctx.qrCodes.validate(record.data.qr_code);
});

await app.close();
await ctx.close();
fs.rmSync(dir, { recursive: true, force: true });
