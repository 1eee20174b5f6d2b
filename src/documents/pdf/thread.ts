import type { ThreadMain } from "../../threads/worker-pool.ts";
import { type PdfInput, renderInvoicePdf } from "./render.ts";

/** The PDF thread's module (see pool.ts); in place too, with `thread: false`. */
export default (() => (input: PdfInput) => renderInvoicePdf(input)) satisfies ThreadMain;
