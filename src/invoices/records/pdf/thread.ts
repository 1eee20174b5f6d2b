import type { ThreadMain } from "../../../threads/worker-pool.ts";
import { type InvoicePdfInput, renderInvoicePdf } from "./render.ts";

/** The PDF thread's module (see pool.ts); in place too, with `thread: false`. */
export default (() => (input: InvoicePdfInput) => renderInvoicePdf(input)) satisfies ThreadMain;
