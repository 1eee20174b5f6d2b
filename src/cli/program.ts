import { Command } from "commander";
import { apiKeyCommands, businessCommands, webhookCommands } from "./businesses.ts";
import { catalogCommands } from "./catalogs.ts";
import { invoiceCommands } from "./invoices.ts";
import { serviceKeyCommands } from "./keys.ts";
import { openapiCommand } from "./openapi.ts";
import { outboxCommands } from "./outbox.ts";
import { serveCommands } from "./serve.ts";
import { simulateCommands } from "./simulate.ts";
import { auditCommands, verifyCommand, verifyQrCommand } from "./verify.ts";

/**
 * The `einvoice` command, built without being run (index.ts runs it; the docs' test walks it): the
 * groups are added in the order `--help` lists them.
 */
export function einvoiceProgram(): Command {
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
