import { CommanderError } from "commander";
import { ConfigError } from "../config.ts";
import { DomainError } from "../errors.ts";
import { einvoiceProgram } from "./program.ts";
import { SubmitError } from "./submit.ts";

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
