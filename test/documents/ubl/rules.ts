/**
 * The EN 16931 business rules (and, on request, the Peppol BIS Billing 3.0 rules) run on a UBL 2.1
 * document, for tests: the rules as published, compiled Schematron (XSLT 2.0 writing SVRL), run by
 * SaxonJS (the `xslt3` package).
 *
 * SaxonJS runs a stylesheet only once compiled to its own form (a SEF, JSON). Compiling the EN 16931
 * stylesheet takes about 25 s and the Peppol one about 10 s, so each is compiled once, by the `xslt3`
 * command in a child process, into the system's temporary folder under a name holding a sha256 of
 * the stylesheet's content and the SaxonJS version: a later run (any process, any worktree) loads
 * the SEF, and a changed stylesheet gets a new one. The SEF is written under a temporary name and
 * renamed into place, so a reader never sees half of one; processes starting at once leave the
 * compiling to one of them (a lock file beside the SEF) and wait for it.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { XmlDocument, type XmlElement } from "libxml2-wasm";
import { SHARED_DIR } from "../../helpers.ts";

export type Finding = { id: string; location: string; text: string; flag: string };
export type RulesResult = { fatal: Finding[]; warnings: Finding[] };

export const RULES_DIR = path.join(SHARED_DIR, "data", "ubl", "rules");
export const EN16931_XSLT = path.join(RULES_DIR, "EN16931-UBL-validation.xslt");
export const PEPPOL_XSLT = path.join(RULES_DIR, "PEPPOL-EN16931-UBL.xslt");

const SVRL_NS = "http://purl.oclc.org/dsdl/svrl";

/** The part of SaxonJS's API used here (the package ships no typings). */
type SaxonJSApi = {
  transform(
    options: {
      stylesheetInternal: unknown;
      sourceText: string;
      destination: "serialized";
    },
    mode: "async",
  ): Promise<{ principalResult: string }>;
  getProcessorInfo(): { productVersion: string };
};

const requireHere = createRequire(import.meta.url);
/** xslt3's command-line script; SaxonJS is its dependency, loaded from beside it. */
const XSLT3_CLI = requireHere.resolve("xslt3");
const SaxonJS = createRequire(XSLT3_CLI)("saxon-js") as SaxonJSApi;

const run = promisify(execFile);

/** Milliseconds spent, per stylesheet file name: compiling (this process only) and loading a SEF. */
const timings = {
  compiledMs: {} as Record<string, number>,
  loadedMs: {} as Record<string, number>,
  transforms: 0,
  transformMs: 0,
};

/** What this process spent so far: compiling and loading each stylesheet, and running them. */
export function rulesTimings(): typeof timings {
  return structuredClone(timings);
}

/** Where the SEF of this stylesheet's content lives once compiled. */
export function sefPath(xsltPath: string): string {
  const digest = createHash("sha256").update(fs.readFileSync(xsltPath)).digest("hex");
  const version = SaxonJS.getProcessorInfo().productVersion;
  const base = path.basename(xsltPath).replace(/\.xslt?$/i, "");
  return path.join(os.tmpdir(), `einvoice-${base}-${digest}-saxonjs${version}.sef.json`);
}

async function compile(xsltPath: string, target: string): Promise<void> {
  const temporary = `${target}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  const started = performance.now();
  try {
    await run(process.execPath, [XSLT3_CLI, `-xsl:${xsltPath}`, `-export:${temporary}`, "-nogo"], {
      maxBuffer: 16 * 1024 * 1024,
    });
    fs.renameSync(temporary, target);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    const stderr = (error as { stderr?: string }).stderr ?? "";
    throw new Error(`compiling ${xsltPath} with xslt3 failed: ${stderr || String(error)}`);
  }
  timings.compiledMs[path.basename(xsltPath)] = performance.now() - started;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a lock's holder is gone: its process ended, or it has held it far too long. */
function stale(lock: string): boolean {
  try {
    const pid = Number(fs.readFileSync(lock, "utf8"));
    if (Date.now() - fs.statSync(lock).mtimeMs > 10 * 60_000) return true;
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Compiles the stylesheet unless its SEF exists. One process compiles at a time (a lock file holding
 * its pid): the others wait for its SEF instead of compiling it again beside it, which on a busy
 * machine would take each of them several times as long.
 */
async function ensureCompiled(xsltPath: string, target: string): Promise<void> {
  const lock = `${target}.lock`;
  while (!fs.existsSync(target)) {
    let fd: number | undefined;
    try {
      fd = fs.openSync(lock, "wx");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (fd === undefined) {
      if (stale(lock)) fs.rmSync(lock, { force: true });
      else await sleep(250);
      continue;
    }
    try {
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      if (!fs.existsSync(target)) await compile(xsltPath, target);
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }
}

async function load(xsltPath: string): Promise<unknown> {
  const target = sefPath(xsltPath);
  await ensureCompiled(xsltPath, target);
  const started = performance.now();
  let sef: unknown;
  try {
    sef = JSON.parse(fs.readFileSync(target, "utf8"));
  } catch {
    // Not written by the rename above (a disk filled, a hand edit): made again.
    fs.rmSync(target, { force: true });
    await ensureCompiled(xsltPath, target);
    sef = JSON.parse(fs.readFileSync(target, "utf8"));
  }
  timings.loadedMs[path.basename(xsltPath)] = performance.now() - started;
  return sef;
}

const loaded = new Map<string, Promise<unknown>>();

/** The stylesheet compiled (once per content) and loaded (once per process). */
export function stylesheet(xsltPath: string): Promise<unknown> {
  let sef = loaded.get(xsltPath);
  if (!sef) {
    sef = load(xsltPath);
    loaded.set(xsltPath, sef);
    sef.catch(() => loaded.delete(xsltPath));
  }
  return sef;
}

/** The failed assertions and successful reports of an SVRL document. */
export function svrlFindings(svrl: string): Finding[] {
  const doc = XmlDocument.fromString(svrl);
  try {
    const ns = { svrl: SVRL_NS };
    return doc.find("//svrl:failed-assert | //svrl:successful-report", ns).map((node) => {
      const element = node as XmlElement;
      const text = element.get("svrl:text", ns)?.content ?? "";
      return {
        id: element.attr("id")?.value ?? "",
        location: element.attr("location")?.value ?? "",
        text: text.replace(/\s+/g, " ").trim(),
        flag: element.attr("flag")?.value ?? "",
      };
    });
  } finally {
    doc.dispose();
  }
}

/** Schematron's flag: an assertion without one, or flagged fatal or error, is fatal; others warn. */
function isFatal(flag: string): boolean {
  return flag === "" || flag === "fatal" || flag === "error";
}

/** Runs one compiled Schematron stylesheet on a document. */
export async function runRules(xsltPath: string, xml: string): Promise<RulesResult> {
  const sef = await stylesheet(xsltPath);
  const started = performance.now();
  const result = await SaxonJS.transform(
    { stylesheetInternal: sef, sourceText: xml, destination: "serialized" },
    "async",
  );
  timings.transforms += 1;
  timings.transformMs += performance.now() - started;
  const findings = svrlFindings(result.principalResult);
  return {
    fatal: findings.filter((finding) => isFatal(finding.flag)),
    warnings: findings.filter((finding) => !isFatal(finding.flag)),
  };
}

/**
 * The EN 16931 rules' findings on a UBL 2.1 invoice or credit note; with `peppol`, the Peppol BIS
 * Billing 3.0 rules' findings follow. Fatal: flagged fatal; warnings: flagged warning.
 */
export async function en16931(xml: string, opts?: { peppol?: boolean }): Promise<RulesResult> {
  const result = await runRules(EN16931_XSLT, xml);
  if (opts?.peppol) {
    const peppol = await runRules(PEPPOL_XSLT, xml);
    result.fatal.push(...peppol.fatal);
    result.warnings.push(...peppol.warnings);
  }
  return result;
}
