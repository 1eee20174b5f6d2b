import type { Principal } from "../../businesses/business-service.ts";
import { DomainError } from "../../errors.ts";
import { busyError, droppedError, JobDropped } from "../../threads/fair-queue.ts";
import { charsRefusal, printRefusal } from "./bounds.ts";
import { PdfCache } from "./cache.ts";
import {
  PdfOutOfMemory,
  type PdfRenderer,
  PdfRendererBusy,
  PdfTimeLimit,
  type RenderOptions,
} from "./pool.ts";
import type { InvoicePdfInput, PdfInput, ReceivedPdfInput } from "./render.ts";

/** The most bytes of rendered PDFs kept for the next fetch of the same invoice in the same state. */
export const PDF_CACHE_BYTES = 32 * 2 ** 20;

/** What a received invoice's copy prints besides its document: the inbox's row of it. */
export type ReceivedPrintable = {
  irn: string;
  status: string;
  source: string;
  supplier_tin: string | null;
  supplier_name: string | null;
  received_at: string;
};

/**
 * Where a business's received invoices are read, under the inbox's tenant rules (another business's
 * IRN is not found): the inbox's service, handed in by the caller, as this folder does not import it.
 */
export type ReceivedDocuments = {
  /** The row, its document's stored size in characters, and the document, parsed when opened. */
  document(
    principal: Principal,
    irn: string,
  ): Promise<{ row: ReceivedPrintable; chars: number; open(): Record<string, unknown> }>;
};

/** The input of a received invoice's copy. */
export function receivedPdfInput(
  row: ReceivedPrintable,
  document: Record<string, unknown>,
): ReceivedPdfInput {
  return {
    irn: row.irn,
    status: row.status,
    document,
    received: {
      supplierTin: row.supplier_tin,
      supplierName: row.supplier_name,
      at: row.received_at,
      source: row.source,
    },
  };
}

const tooLarge = (details: string) =>
  new DomainError("too_large_to_print", {
    message: "Invoice too large to print",
    details: `${details}: its document can be read whole as JSON`,
  });

/** The renderer's own failures in the API's terms; any other is the service's fault (a 500). */
function renderingError(err: unknown): unknown {
  if (err instanceof PdfRendererBusy) return busyError("the PDF renderer", err);
  if (err instanceof JobDropped) return droppedError(err);
  if (err instanceof PdfOutOfMemory) {
    return tooLarge(`rendering its PDF needed more than the PDF thread's ${err.limitMb} MB of memory`);
  }
  if (err instanceof PdfTimeLimit) {
    // Within the bounds the largest PDF takes a few seconds: past the limit, the machine is loaded.
    return new DomainError("service_unavailable", {
      message: "Service temporarily unavailable",
      details: `the PDF was not rendered within ${err.ms} ms; retry after the indicated delay`,
      retryAfter: 5,
    });
  }
  return err;
}

/**
 * Where signed invoices are read for printing, under the tenant rules of `GET {IRN}`: the invoices'
 * records, handed in by the composition root, as a document's renderer knows no lifecycle. The
 * revision names the state the PDF shows (status, payments), the key of the rendered copy kept.
 */
export type PrintableInvoices = {
  printable(principal: Principal, irn: string): Promise<{ input: InvoicePdfInput; revision: string }>;
  operatorPrintable(irn: string): Promise<{ input: InvoicePdfInput; revision: string }>;
  printedRevision(principal: Principal, irn: string): Promise<string>;
};

/** A rendering several requests wait for: dropped only once every one of them has gone. */
type Shared = { pdf: Promise<Buffer>; controller: AbortController; waiting: number };

/**
 * The buyer's PDF of an invoice: same tenant rules as `GET {IRN}`, rendered off the event loop. A
 * rendered PDF is kept (`PDF_CACHE_BYTES`, least recently used out) under its invoice and the state
 * the PDF shows (`printedRevision`): fetched again, it is served without rendering; after a payment
 * update or a change of status, it is rendered anew. Requests for a PDF already being rendered wait
 * for that rendering instead of queueing one of their own. Every PDF, sent or received, is measured
 * first (bounds.ts): one too large to print is refused with `too_large_to_print`, never queued.
 */
export function invoicePdfs(deps: {
  records: PrintableInvoices;
  renderer: Pick<PdfRenderer, "render"> & Partial<Pick<PdfRenderer, "admit" | "stats">>;
  cacheBytes?: number;
}) {
  const { records, renderer } = deps;
  const cache = new PdfCache(deps.cacheBytes ?? PDF_CACHE_BYTES);
  const rendering = new Map<string, Shared>();
  const keyOf = (businessId: string, irn: string, revision: string) => `${businessId} ${irn} ${revision}`;

  /** `load` reads the invoice: not done when the business's share of the queue is used anyway. */
  async function render(
    load: () => Promise<{ input: PdfInput; revision: string }>,
    options: RenderOptions,
    rendered?: (pdf: Buffer, revision: string) => void,
  ): Promise<Buffer> {
    try {
      renderer.admit?.(options.business);
      const { input, revision } = await load();
      // Refused before it is copied to the thread: the copy of a huge document holds the event loop.
      const refusal = printRefusal(input.document);
      if (refusal) throw tooLarge(refusal);
      const pdf = await renderer.render(input, options);
      rendered?.(pdf, revision);
      return pdf;
    } catch (err) {
      throw renderingError(err);
    }
  }

  /** Joins the rendering of `key` under way, or starts it; `signal` withdraws this request only. */
  function joined(key: string, start: (signal: AbortSignal) => Promise<Buffer>, signal?: AbortSignal) {
    let shared = rendering.get(key);
    // One that every request waiting for it has left is on its way out: a newcomer starts afresh.
    if (!shared || shared.controller.signal.aborted) {
      const controller = new AbortController();
      const entry: Shared = { pdf: start(controller.signal), controller, waiting: 0 };
      const done = () => {
        if (rendering.get(key) === entry) rendering.delete(key);
      };
      entry.pdf.then(done, done);
      rendering.set(key, entry);
      shared = entry;
    }
    const entry = shared;
    entry.waiting++;
    if (!signal) return entry.pdf;
    const leave = () => {
      entry.waiting--;
      if (entry.waiting === 0) entry.controller.abort();
    };
    if (signal.aborted) leave();
    else signal.addEventListener("abort", leave, { once: true });
    return entry.pdf.finally(() => signal.removeEventListener("abort", leave));
  }

  return {
    /** `signal`: the client's connection; a PDF no one waits for any more is not rendered. */
    async pdf(principal: Principal, irn: string, signal?: AbortSignal): Promise<Buffer> {
      const key = keyOf(principal.businessId, irn, await records.printedRevision(principal, irn));
      const kept = cache.get(key);
      if (kept) return kept;
      return joined(
        key,
        (shared) =>
          render(
            () => records.printable(principal, irn),
            { business: principal.businessId, signal: shared },
            // Kept under the state it was rendered from, which a payment may have moved on since `key`.
            (pdf, revision) => cache.set(keyOf(principal.businessId, irn, revision), pdf),
          ),
        signal,
      );
    },
    /** Any business's invoice, for the operator (the CLI): rendered each time, in the queue's lane without a business. */
    operatorPdf: (irn: string) => render(() => records.operatorPrintable(irn), {}),
    /**
     * The copy of an invoice the business received, from `inbox` under its tenant rules: through the
     * same queue, in the business's lane, and dropped when `signal` fires before it is rendered.
     * Rendered each time: a buyer reads one a few times, and its share of the queue bounds the rest.
     */
    receivedPdf(principal: Principal, irn: string, inbox: ReceivedDocuments, signal?: AbortSignal) {
      return render(
        async () => {
          const { row, chars, open } = await inbox.document(principal, irn);
          // Measured before it is parsed: a received document may be far larger than a signed one.
          const refusal = charsRefusal(chars);
          if (refusal) throw tooLarge(refusal);
          return { input: receivedPdfInput(row, open()), revision: row.status };
        },
        { business: principal.businessId, signal },
      );
    },
    /** The renderer's counts (rendered, dropped, refused, waiting) and the cache's. */
    stats: () => ({
      ...renderer.stats?.(),
      cache: { hits: cache.hits, misses: cache.misses, entries: cache.size, bytes: cache.bytes },
    }),
  };
}

export type InvoicePdfs = ReturnType<typeof invoicePdfs>;
