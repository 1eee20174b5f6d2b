import fs from "node:fs";
import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { readToken, tokenOfText } from "../crypto/verification-token.ts";
import { verifyRecord } from "../crypto/verify-record.ts";
import { createContext } from "../main.ts";
import { decodeQrImage } from "../qr/qr-image-decoder.ts";
import { parseImageDataUrl } from "../qr/qr-image-guard.ts";
import { print } from "./output.ts";

/** `audit verify`: the integrity of the whole register, from its database. */
export function auditCommands(program: Command): void {
  const audit = program.command("audit").description("integrity of the register");
  audit
    .command("verify")
    .description("walk every hash chain and re-verify each signature; exits 1 when anything is broken")
    .option("--business <id>", "only this business's chain")
    .action(async (opts: { business?: string }) => {
      const ctx = await createContext(loadConfig());
      try {
        const result = await ctx.audit.verify(opts.business);
        print(result);
        if (result.broken.length > 0) process.exitCode = 1;
      } finally {
        await ctx.close();
      }
    });
}

/** The JWK Set from a URL (…/.well-known/jwks.json) or a file. */
async function jwksFrom(source: string): Promise<unknown> {
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source, { redirect: "error", signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`the JWK Set at ${source} answered ${response.status}`);
    return response.json();
  }
  return JSON.parse(fs.readFileSync(source, "utf8"));
}

/** The text of a verification QR: the argument itself, or the code read from the image file it names. */
async function scannedText(input: string): Promise<string> {
  if (!fs.existsSync(input) || !fs.statSync(input).isFile()) return input;
  const bytes = fs.readFileSync(input);
  const type =
    bytes[0] === 0x89 && bytes[1] === 0x50 ? "png" : bytes[0] === 0xff && bytes[1] === 0xd8 ? "jpeg" : null;
  if (!type) throw new Error(`${input} is neither a PNG nor a JPEG image`);
  // The same guard as the API's: a crafted image is refused before it is decoded.
  const image = parseImageDataUrl(`data:image/${type};base64,${bytes.toString("base64")}`);
  const text = image ? await decodeQrImage(image) : null;
  if (text === null) throw new Error(`no QR code was found in ${input}`);
  return text;
}

/** `verify-qr`: an invoice's verification QR, by anyone, offline but for the JWK Set. */
export function verifyQrCommand(program: Command): void {
  program
    .command("verify-qr")
    .description(
      "check an invoice's verification QR code (its text, a verification URL, or a PNG/JPEG of it) against the JWK Set; exits 1 when it does not verify",
    )
    .argument("<text-or-image>", "the scanned text or URL, or an image file of the code")
    .requiredOption("--jwks <source>", "the JWK Set: a URL (…/.well-known/jwks.json) or a file")
    .action(async (input: string, opts: { jwks: string }) => {
      const text = await scannedText(input);
      const jwks = (await jwksFrom(opts.jwks)) as { keys?: unknown };
      const keys = Array.isArray(jwks?.keys) ? jwks.keys : [];
      const reading = readToken(tokenOfText(text), { keys });
      print(
        reading.valid
          ? { valid: true, kid: reading.kid, ...reading.claims }
          : { valid: false, reason: reading.reason, details: reading.detail },
      );
      if (!reading.valid) process.exitCode = 1;
    });
}

/** `verify`: one saved record, by anyone holding it, without the service's database. */
export function verifyCommand(program: Command): void {
  program
    .command("verify")
    .description(
      "verify a saved full record offline, with only the service's JWK Set; exits 1 when it does not hold",
    )
    .argument("<file>", "the record as saved from GET /api/v1/einvoice/{IRN} (the envelope or its data)")
    .requiredOption("--jwks <source>", "the JWK Set: a URL (…/.well-known/jwks.json) or a file")
    .action(async (file: string, opts: { jwks: string }) => {
      const record: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
      const jwks = await jwksFrom(opts.jwks);
      const verdict = verifyRecord(record, jwks);
      print(verdict);
      if (!verdict.valid) process.exitCode = 1;
    });
}
