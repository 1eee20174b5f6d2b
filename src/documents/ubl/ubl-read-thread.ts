import type { ThreadMain } from "../../threads/worker-pool.ts";
import { loadUblSchemas } from "./schema.ts";
import { readUblBody, type UblReadAnswer, type UblReadInput } from "./ubl-read.ts";
import { warmUpXml } from "./xml-warm-up.ts";

/** What the UBL thread starts with: the folder of the UBL 2.1 schemas, if the service has one. */
export type UblThreadData = { schemas: string | undefined };

/**
 * The UBL thread's module (see ubl-read-pool.ts): it compiles the schemas of its own (libxml2 is a
 * WebAssembly instance per thread) and takes the parse's every path once before its first document,
 * which would otherwise run through unoptimised code (xml-warm-up.ts).
 */
export default ((data: UblThreadData) => {
  const schemas = data.schemas ? loadUblSchemas(data.schemas) : undefined;
  warmUpXml();
  return (input: UblReadInput): UblReadAnswer => readUblBody(input, schemas);
}) satisfies ThreadMain;
