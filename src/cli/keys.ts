import { createPublicKey } from "node:crypto";
import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import {
  generatePrivateKey,
  newProductionSecrets,
  rotateSandboxDataKey,
  rotateSandboxKey,
} from "../crypto/keyring.ts";
import { jwkOf } from "../crypto/signer.ts";
import { print, withContext } from "./output.ts";

/** `keys`: the service's own keys (signing, QR, data), not a business's API credentials. */
export function serviceKeyCommands(program: Command): void {
  const keys = program.command("keys").description("service keys");
  rotateKeyCommands(keys);
  generateCommand(keys);
  rotateDataKeyCommand(keys);
}

function rotateKeyCommands(keys: Command): void {
  for (const [name, kind, variable] of [
    ["rotate-signing-key", "signing", "EINVOICE_SIGNING_KEYS"],
    ["rotate-qr-key", "qr", "EINVOICE_QR_KEYS"],
  ] as const) {
    keys
      .command(name)
      .description(
        `add a new ${kind === "qr" ? "QR (RSA-2048)" : "signing (Ed25519)"} key in front of the old ones, which stay usable`,
      )
      .action(() => {
        const config = loadConfig();
        if (config.mode === "production") {
          // Production keys live in the environment: print a new one to put first in the variable.
          const pem = generatePrivateKey(kind === "qr" ? "rsa" : "ed25519");
          print({
            ...describe(kind, pem),
            private_key: Buffer.from(pem).toString("base64"),
            prepend_to: variable,
          });
          return;
        }
        print({
          ...describe(kind, rotateSandboxKey(config.dataDir, kind)),
          rotated: true,
          note: "restart the server to use it",
        });
      });
  }
}

function generateCommand(keys: Command): void {
  keys
    .command("generate")
    .description(
      "new production secrets: the four key variables and an operator password (--env: as lines of an .env file)",
    )
    .option("--env", "print NAME=value lines instead of JSON")
    .action((options: { env?: boolean }) => {
      // Needs no configuration: it makes the configuration a production start requires.
      const secrets = newProductionSecrets();
      if (options.env) {
        process.stdout.write(
          `${Object.entries(secrets)
            .map(([name, value]) => `${name}=${value}`)
            .join("\n")}\n`,
        );
        return;
      }
      print(secrets);
    });
}

function rotateDataKeyCommand(keys: Command): void {
  keys
    .command("rotate-data-key")
    .description(
      "make a new data key current for every running process, then re-encrypt every sealed value under it (sandbox: generated; production: the first of EINVOICE_DATA_KEYS, which every process must already have in its list)",
    )
    .action(async () => {
      const config = loadConfig();
      // In production the operator has already put the new key first in EINVOICE_DATA_KEYS here, and
      // in the servers' lists: they seal under it as soon as the re-encryption has recorded it.
      const added = config.mode === "production" ? undefined : rotateSandboxDataKey(config.dataDir);
      await withContext(async (ctx) => ({
        ...(await ctx.dataKeys.resealAll()),
        ...(added ? { generated: true } : {}),
      }));
    });
}

function describe(kind: "signing" | "qr", pem: string) {
  return kind === "signing" ? { kind, kid: jwkOf(createPublicKey(pem)).kid } : { kind };
}
