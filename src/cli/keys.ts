import { createPublicKey } from "node:crypto";
import { type Command, Option } from "commander";
import { loadConfig, type SettingName } from "../config.ts";
import {
  generatePrivateKey,
  newProductionSecrets,
  rotateSandboxDataKey,
  rotateSandboxKey,
} from "../crypto/keyring.ts";
import { jwkOf } from "../crypto/signer.ts";
import { print, withContext } from "./output.ts";

/**
 * `keys`: the service's own secrets (the signing, QR and data keys; `generate` adds the pepper and the
 * operator password), not a business's API credentials.
 */
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
  ] as const satisfies ReadonlyArray<readonly [string, string, SettingName]>) {
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
    .addOption(
      new Option(
        "--authority <kind>",
        "mbs: add EINVOICE_AUTHORITY=mbs and the EINVOICE_MBS_* settings to fill in (the MBS host and the APP's x-api-key and x-api-secret from the MBS dashboard: they cannot be generated, and start-up names any still empty)",
      ).choices(["builtin", "mbs"]),
    )
    .action((options: { env?: boolean; authority?: string }) => {
      // Needs no configuration: it makes the configuration a production start requires.
      const secrets: Record<string, string> = { ...newProductionSecrets() };
      if (options.authority === "mbs") Object.assign(secrets, MBS_SETTINGS);
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

/** What delivering to MBS needs beside the secrets: the authority's own, to be filled in. */
const MBS_SETTINGS = {
  EINVOICE_AUTHORITY: "mbs",
  EINVOICE_MBS_URL: "",
  EINVOICE_MBS_API_KEY: "",
  EINVOICE_MBS_API_SECRET: "",
} satisfies Partial<Record<SettingName, string>>;

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
