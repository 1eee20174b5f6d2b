import { printRefusal } from "../documents/pdf/bounds.ts";
import { type Html, html } from "../html/html.ts";
import type { InboxFilter } from "../inbox/inbox-repository.ts";
import { documentSection } from "./document-view.ts";
import { badge, businessLink, type Data, historyTable, options, page, when } from "./views.ts";

/** A received invoice's statuses, in the order the buyer's decision takes them. */
export const RECEIVED_STATUSES = ["RECEIVED", "ACKNOWLEDGED", "REJECTED"] as const;

/** What each state of telling the authority of an acknowledgement means, as the page says it. */
const ACKNOWLEDGEMENTS: Record<string, string> = {
  none: "not acknowledged",
  queued: "acknowledged: being told to the tax authority (outbox)",
  sent: "acknowledged and told to the tax authority",
  failed: "acknowledged, but telling the tax authority failed for good",
  not_needed: "acknowledged (from a business of this service: nothing to tell the tax authority)",
};

const SOURCES: Record<string, string> = {
  mbs: "pulled from the tax authority (MBS)",
  builtin: "from a business of this service",
};

const inboxOf = (businessId: string) => `/dashboard/businesses/${encodeURIComponent(businessId)}/inbox`;
const receivedOf = (businessId: string, irn: string) => `${inboxOf(businessId)}/${encodeURIComponent(irn)}`;

const amount = (value: string | null, currency: string | null) =>
  value === null ? "—" : `${value}${currency ? ` ${currency}` : ""}`;

/** A page of the list, the filters kept. */
function pageLink(businessId: string, filter: InboxFilter, start: number): string {
  const query = new URLSearchParams(
    Object.entries({
      status: filter.status,
      supplier_tin: filter.supplierTin,
      from: filter.from,
      to: filter.to,
    }).filter((e): e is [string, string] => e[1] !== undefined),
  );
  if (start > 0) query.set("start", String(start));
  const text = query.toString();
  return text === "" ? inboxOf(businessId) : `${inboxOf(businessId)}?${text}`;
}

function filters(businessId: string, filter: InboxFilter): Html {
  return html`<form method="get" action="${inboxOf(businessId)}" class="card filters">
  <label>Status <select name="status">${options(RECEIVED_STATUSES, filter.status, "any")}</select></label>
  <label>Supplier TIN <input name="supplier_tin" value="${filter.supplierTin ?? ""}" maxlength="40"></label>
  <label>Received from <input type="date" name="from" value="${filter.from ?? ""}"></label>
  <label>to <input type="date" name="to" value="${filter.to ?? ""}"></label>
  <button>Search</button> <a href="${inboxOf(businessId)}">Clear</a>
</form>`;
}

/** The invoices a business received as the buyer, newest first, a page at a time. */
export function inboxPage(data: Data<"received">, filter: InboxFilter): Html {
  const { business: b, page: p } = data;
  const end = p.start + p.items.length;
  const older = end < p.total ? pageLink(b.id, filter, end) : undefined;
  const newer = p.start > 0 ? pageLink(b.id, filter, Math.max(0, p.start - p.length)) : undefined;
  return page(
    `Received by ${b.name}`,
    "businesses",
    html`<p>Invoices ${businessLink(b.id, b.name)} (TIN ${b.tin}) received from its suppliers as the buyer.</p>
${filters(b.id, filter)}
<table id="received">
<thead><tr><th>IRN</th><th>Supplier</th><th>Supplier TIN</th><th>Issued</th><th class="num">Amount payable</th><th>Status</th><th>Acknowledgement</th><th class="num">Findings</th><th>Received</th></tr></thead>
<tbody>${p.items.map(
      (r) =>
        html`<tr><td><a href="${receivedOf(b.id, r.irn)}">${r.irn}</a></td><td>${r.supplier.name ?? "—"}</td><td>${r.supplier.tin ?? "—"}</td><td>${r.issue_date ?? "—"}</td><td class="num">${amount(r.payable_amount, r.currency)}</td><td>${badge(r.status)}</td><td>${badge(r.acknowledgement)}</td><td class="num${r.warnings > 0 ? " warned" : ""}">${r.warnings}</td><td>${when(r.received_at)}</td></tr>`,
    )}</tbody>
</table>
${p.items.length === 0 ? html`<p class="muted">No received invoice matches.</p>` : html`<p class="muted" id="received-range">${p.start + 1}–${end} of ${p.total}</p>`}
<p>${newer ? html`<a rel="prev" href="${newer}">← Newer</a> ` : ""}${older ? html`<a rel="next" href="${older}">Older received invoices →</a>` : ""}</p>`,
  );
}

/** What the supplier wrote as the totals, as written: the checks say whether they add up. */
function totals(document: Record<string, unknown>, currency: string | null): Html {
  const sums = document.legal_monetary_total;
  const of = (key: string) => {
    const value =
      typeof sums === "object" && sums !== null ? (sums as Record<string, unknown>)[key] : undefined;
    return typeof value === "number" || typeof value === "string"
      ? amount(String(value), currency)
      : undefined;
  };
  const rows = [
    ["Sum of lines", of("line_extension_amount")],
    ["Total excluding tax", of("tax_exclusive_amount")],
    ["Total including tax", of("tax_inclusive_amount")],
    ["Amount payable", of("payable_amount")],
  ].filter((row): row is [string, string] => row[1] !== undefined);
  if (rows.length === 0) return html`<p class="muted">The document states no totals.</p>`;
  return html`<table id="amounts"><tbody>${rows.map(
    ([label, value]) => html`<tr><th>${label}</th><td class="num">${value}</td></tr>`,
  )}</tbody></table>`;
}

/** The buyer's decision, while it is to be made: acknowledge, or reject with a reason. */
function decide(businessId: string, irn: string): Html {
  const at = receivedOf(businessId, irn);
  return html`<div class="card decide" id="decide">
  <form method="post" action="${at}/acknowledge"><button>Acknowledge</button></form>
  <form method="post" action="${at}/reject"><label>Reason <input name="reason" required maxlength="1000" placeholder="why the buyer rejects it"></label><button class="danger">Reject</button></form>
</div>`;
}

/**
 * One received invoice: supplier, amounts, status, what the checks found, the history, the document
 * (its lines a page at a time, from `line`).
 */
export function receivedPage(data: Data<"receivedInvoice">, notice?: string, line?: number): Html {
  const { business: b, record: r } = data;
  // What the PDF route would refuse, said here instead of behind a link (bounds.ts).
  const refusal = printRefusal(r.document);
  return page(
    r.irn,
    "businesses",
    html`<dl class="facts">
  <dt>Buyer</dt><dd>${businessLink(b.id, b.name)} · <a href="${inboxOf(b.id)}">its received invoices</a></dd>
  <dt>Supplier</dt><dd id="supplier">${r.supplier.name ?? "—"}</dd>
  <dt>Supplier TIN</dt><dd>${r.supplier.tin ?? "—"}</dd>
  <dt>Customer TIN</dt><dd>${r.customer_tin}</dd>
  <dt>Source</dt><dd>${SOURCES[r.source] ?? r.source}</dd>
  <dt>Invoice type</dt><dd>${r.invoice_type_code ?? "—"}</dd>
  <dt>Issued</dt><dd>${r.issue_date ?? "—"}</dd>
  <dt>Amount payable</dt><dd id="payable">${amount(r.payable_amount, r.currency)}</dd>
  <dt>Status</dt><dd id="status">${badge(r.status)}</dd>
  <dt>Acknowledgement</dt><dd id="acknowledgement">${badge(r.acknowledgement)} <span class="muted">${ACKNOWLEDGEMENTS[r.acknowledgement] ?? ""}</span></dd>
  ${r.reason === null ? "" : html`<dt>Reason</dt><dd id="reason">${r.reason}</dd>`}
  <dt>Received</dt><dd>${when(r.received_at)}</dd>
  <dt>Decided</dt><dd>${when(r.decided_at)}</dd>
  <dt>PDF</dt><dd>${refusal ? html`<span class="muted" id="pdf-refused">Not printed: ${refusal}</span>` : html`<a href="${receivedOf(b.id, r.irn)}/pdf">Download the PDF</a>`}</dd>
  <dt>UBL 2.1</dt><dd>${refusal ? html`<span class="muted">Not written: ${refusal}</span>` : html`<a id="ubl" href="${receivedOf(b.id, r.irn)}/xml">Download the invoice as UBL</a>`}</dd>
</dl>
${r.status === "RECEIVED" ? decide(b.id, r.irn) : ""}
<h2>Amounts</h2>
${totals(r.document, r.currency)}
<h2>Checks</h2>
${
  r.checks.length === 0
    ? html`<p class="muted" id="no-findings">The checks found nothing wrong.</p>`
    : html`<p>The supplier's mistakes the checks found: reported, never a reason to drop the invoice.</p>
<table id="checks">
<thead><tr><th>Rule</th><th>Path</th><th>Message</th></tr></thead>
<tbody>${r.checks.map((c) => html`<tr><td><code>${c.rule}</code></td><td><code>${c.path}</code></td><td>${c.message}</td></tr>`)}</tbody>
</table>`
}
<h2>History</h2>
${historyTable(r.history)}
${documentSection(r.document, line, (at) => `${receivedOf(b.id, r.irn)}?line=${at}`)}`,
    notice,
  );
}
