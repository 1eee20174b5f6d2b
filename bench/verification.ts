/**
 * In-process benchmark of the verification token: issuing one (what the full record, the QR images
 * and the PDF do per invoice) and reading one (what the /verify page and verify-qr do), with this
 * service's code and, for comparison, with `jose` (a third party's check).
 *   npm run bench:verification [-- --runs 20000]
 */
import { generateKeyPairSync } from "node:crypto";
import os from "node:os";
import { compactVerify, createLocalJWKSet } from "jose";
import { createSigner } from "../src/crypto/signer.ts";
import { readToken, type VerificationClaims } from "../src/crypto/verification-token.ts";

const at = process.argv.indexOf("--runs");
const RUNS = at > 0 ? Number(process.argv[at + 1]) : 20_000;

const signer = createSigner([
  generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
]);
const claims: VerificationClaims = {
  irn: "INV0001-AB12CD34-20261115",
  tin: "20198222-0002",
  dt: "2026-11-15",
  amt: "693375.00",
  cur: "NGN",
  h: "a8b428308bb48a7429288b99cf342a18c890cc7ccf389e1d740dd207aad931b1",
};
const token = signer.verificationToken(claims, signer.kid);
const jwks = signer.jwks();
const keySet = createLocalJWKSet(jwks as never);

async function measure(label: string, work: () => unknown): Promise<void> {
  for (let i = 0; i < 1000; i++) await work();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => (times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0) * 1000;
  const total = times.reduce((a, b) => a + b, 0);
  console.log(
    `${label.padEnd(34)} median ${q(0.5).toFixed(0).padStart(4)} µs   p95 ${q(0.95).toFixed(0).padStart(4)} µs   ${Math.round(
      (RUNS / total) * 1000,
    )
      .toLocaleString("en")
      .padStart(7)} per second   (${RUNS} runs)`,
  );
}

console.log(
  `node ${process.version}, ${os.cpus()[0]?.model ?? "unknown cpu"} × ${os.cpus().length}, one thread`,
);
console.log(`token: ${token.length} characters`);
await measure("issue (node:crypto Ed25519)", () => signer.verificationToken(claims, signer.kid));
await measure("read and verify (ours)", () => {
  if (!readToken(token, jwks).valid) throw new Error("the token does not verify");
});
await measure("verify with jose (compactVerify)", () => compactVerify(token, keySet));
