import { Command, CommanderError } from "commander";
import { ConfigError } from "../config.ts";
import { DomainError } from "../errors.ts";
import { apiKeyCommands, businessCommands, webhookCommands } from "./businesses.ts";
import { catalogCommands } from "./catalogs.ts";
import { invoiceCommands } from "./invoices.ts";
import { serviceKeyCommands } from "./keys.ts";
import { openapiCommand } from "./openapi.ts";
import { outboxCommands } from "./outbox.ts";
import { serveCommands } from "./serve.ts";
import { simulateCommands } from "./simulate.ts";
import { SubmitError } from "./submit.ts";
import { auditCommands, verifyCommand, verifyQrCommand } from "./verify.ts";

/** The `einvoice` command: the groups are added in the order `--help` lists them. */
function einvoiceProgram(): Command {
  // Configured before any command is added: each subcommand copies these settings when created, so
  // a usage error throws a CommanderError here instead of exiting from inside the parser.
  const program = new Command("einvoice")
    .description("E-invoicing API v1: server and operator commands")
    .showHelpAfterError()
    .exitOverride();
  serveCommands(program);
  businessCommands(program);
  webhookCommands(program);
  outboxCommands(program);
  apiKeyCommands(program);
  catalogCommands(program);
  auditCommands(program);
  verifyCommand(program);
  verifyQrCommand(program);
  invoiceCommands(program);
  openapiCommand(program);
  serviceKeyCommands(program);
  simulateCommands(program);
  return program;
}

try {
  await einvoiceProgram().parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode;
  } else {
    const message =
      err instanceof DomainError
        ? err.details
        : err instanceof ConfigError || err instanceof SubmitError
          ? err.message
          : String((err as Error)?.message ?? err);
    process.stderr.write(`einvoice: ${message}\n`);
    process.exitCode = 1;
  }
}
