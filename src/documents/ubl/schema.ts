import fs from "node:fs";
import path from "node:path";
import {
  XmlDocument,
  XmlValidateError,
  XsdValidator,
  xmlCleanupInputProvider,
  xmlRegisterInputProvider,
} from "libxml2-wasm";
import { boundedValidate, checkNodeLayout, type SchemaViolation } from "./schema-validate.ts";
import type { UblKind } from "./xml.ts";

export type { SchemaViolation };

/*
 * The UBL 2.1 schemas, compiled once from files read into memory at load. libxml2 resolves their
 * imports through input providers; the first load removes libxml2's own loader (in this WebAssembly
 * build it reads emscripten's in-memory file system, where /dev/null exists) and registers one that
 * answers every request and serves only the schema files, and only while they compile. That holds
 * for the whole process: no document parsed or checked afterwards can make libxml2 load anything,
 * and an xsi:schemaLocation is not even asked for.
 */

/** The compiled schemas' documents are given URLs under this base, which names no real place. */
const BASE = "ubl-xsd:/";

const MAIN = {
  Invoice: "maindoc/UBL-Invoice-2.1.xsd",
  CreditNote: "maindoc/UBL-CreditNote-2.1.xsd",
} as const;

/** Schema violations listed for one document: the first are what a sender needs to fix it. */
export const MAX_SCHEMA_VIOLATIONS = 50;

/** The OASIS folder holds 16 files and 2 MB; anything far beyond is not that folder. */
const MAX_SCHEMA_FILES = 100;
const MAX_SCHEMA_BYTES = 32 * 1024 * 1024;

/** What libxml2 asked the provider for, served or not: at most this many kept. */
const MAX_REQUESTS_KEPT = 200;

export type UblSchemas = {
  /**
   * The document's schema violations (the first MAX_SCHEMA_VIOLATIONS), empty if it is valid. A MiB
   * of UBL takes 5 to 25 ms, as long as parsing it: best checked in a later turn of the event loop.
   */
  check(doc: XmlDocument, kind: UblKind): SchemaViolation[];
  /** The same, and whether there were more than those listed. */
  validate(doc: XmlDocument, kind: UblKind): { violations: SchemaViolation[]; more: boolean };
  /** How long compiling both schemas took, in milliseconds. */
  readonly compileMs: number;
  dispose(): void;
};

type Served = { bytes: Uint8Array; at: number };

type Provider = {
  /** The files that may be served: set only while schemas compile. */
  files: Map<string, Uint8Array>;
  open: Map<number, Served>;
  nextFd: number;
  requests: SchemaRequest[];
  asked: number;
  registered: boolean;
};

/**
 * One provider per libxml2 instance, which is one per thread: kept on the thread's global object,
 * not in this module, because a thread may hold two copies of this module (on one core the UBL
 * thread's module runs in place, bundled on its own: src/threads/thread-bundle.ts), and a second
 * registration would leave the first copy's schemas unable to compile.
 */
const PROVIDER = Symbol.for("einvoice.ubl-schema-provider");
const shared = globalThis as Record<symbol, Provider | undefined>;
const provider: Provider = shared[PROVIDER] ?? {
  files: new Map(),
  open: new Map(),
  nextFd: 1,
  requests: [],
  asked: 0,
  registered: false,
};
shared[PROVIDER] = provider;

/** A resource libxml2 asked the provider for, whether it got it, and its number in the process. */
export type SchemaRequest = { url: string; served: boolean; seq: number };

function record(url: string, served: boolean): void {
  provider.requests.push({ url, served, seq: ++provider.asked });
  if (provider.requests.length > MAX_REQUESTS_KEPT) provider.requests.shift();
}

/** The last 200 resources libxml2 asked for, each numbered since the process started, and whether it got it. */
export function schemaResourceRequests(): readonly SchemaRequest[] {
  return provider.requests;
}

function registerProvider(): void {
  if (provider.registered) return;
  xmlCleanupInputProvider();
  const registered = xmlRegisterInputProvider({
    // Every URL matches, so that no other loader is ever asked.
    match: () => true,
    open: (url) => {
      const bytes = url.startsWith(BASE) ? provider.files.get(url.slice(BASE.length)) : undefined;
      record(url, bytes !== undefined);
      if (bytes === undefined) return undefined;
      const fd = provider.nextFd++;
      provider.open.set(fd, { bytes, at: 0 });
      return fd;
    },
    read: (fd, buf) => {
      const file = provider.open.get(fd);
      if (!file) return -1;
      const chunk = file.bytes.subarray(file.at, file.at + buf.length);
      buf.set(chunk);
      file.at += chunk.length;
      return chunk.length;
    },
    close: (fd) => provider.open.delete(fd),
  });
  if (!registered) throw new Error("libxml2 refused the schema input provider");
  provider.registered = true;
}

/** The .xsd files under `dir`, by their path relative to it with forward slashes. */
function readSchemaFiles(dir: string): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  let total = 0;
  for (const entry of fs.readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (!entry.endsWith(".xsd")) continue;
    const bytes = fs.readFileSync(path.join(dir, entry));
    total += bytes.length;
    if (files.size >= MAX_SCHEMA_FILES || total > MAX_SCHEMA_BYTES) {
      throw new Error(`${dir} holds more XSD than the UBL 2.1 schemas`);
    }
    files.set(entry.split(path.sep).join("/"), bytes);
  }
  return files;
}

function compile(files: Map<string, Uint8Array>, main: string): XsdValidator {
  const bytes = files.get(main);
  if (!bytes) throw new Error(`the UBL schema folder has no ${main}`);
  provider.files = files;
  try {
    const xsd = XmlDocument.fromBuffer(bytes, { url: BASE + main });
    try {
      return XsdValidator.fromDoc(xsd);
    } finally {
      xsd.dispose();
    }
  } catch (error) {
    const details = error instanceof XmlValidateError ? error.details.map((d) => d.message.trim()) : [];
    throw new Error(`the UBL schema ${main} does not compile: ${details.slice(0, 5).join("; ") || error}`);
  } finally {
    provider.files = new Map();
  }
}

/**
 * The UBL 2.1 Invoice and CreditNote schemas in `dir` (OASIS layout: maindoc/ and common/), compiled.
 * Takes 0.2 to 0.9 s on the event loop: call it once at start-up, never for a request.
 */
export function loadUblSchemas(dir: string): UblSchemas {
  registerProvider();
  const probe = XmlDocument.fromString("<a><b/><c/></a>");
  try {
    checkNodeLayout(probe);
  } finally {
    probe.dispose();
  }
  const files = readSchemaFiles(dir);
  const started = performance.now();
  const validators = { Invoice: compile(files, MAIN.Invoice), CreditNote: compile(files, MAIN.CreditNote) };
  const compileMs = performance.now() - started;
  return {
    compileMs,
    check: (doc, kind) => boundedValidate(validators[kind], doc, MAX_SCHEMA_VIOLATIONS).violations,
    validate: (doc, kind) => boundedValidate(validators[kind], doc, MAX_SCHEMA_VIOLATIONS),
    dispose() {
      validators.Invoice.dispose();
      validators.CreditNote.dispose();
    },
  };
}
