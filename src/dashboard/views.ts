import { currencyDigits } from "../documents/money.ts";
import type { DomainError } from "../errors.ts";
import { type Html, html } from "../html/html.ts";
import { INVOICE_STATUSES } from "../invoices/lifecycle.ts";
import { PAYMENT_STATUSES } from "../reference/data.ts";
import type { InvoiceFilter } from "./dashboard-repository.ts";
import type { DashboardService } from "./dashboard-service.ts";
import { documentSection } from "./document-view.ts";

export { STYLE } from "../html/style.ts";

export type Data<K extends keyof DashboardService> = Awaited<ReturnType<DashboardService[K]>>;

const NAV = [
  ["overview", "/dashboard", "Overview"],
  ["businesses", "/dashboard/businesses", "Businesses"],
  ["invoices", "/dashboard/invoices", "Invoices"],
  ["outbox", "/dashboard/outbox", "Outbox"],
] as const;
type Section = (typeof NAV)[number][0];

/** What a finished action says on the page it leads to (`?done=`). */
export const NOTICES = {
  business_added: "Business added. Create a credential for it below.",
  key_revoked: "Credential revoked: it fails from its very next request.",
  requeued: "Transmission re-queued: the outbox workers deliver it; this page shows when.",
  already_queued: "Already queued for transmission: the outbox workers deliver it; this page shows when.",
  inbox_acknowledged:
    "Invoice acknowledged. One pulled from the tax authority is told to it by the outbox workers.",
  inbox_rejected:
    "Invoice rejected, with its reason: recorded here (the tax authority documents no rejection).",
} as const;
export type Notice = keyof typeof NOTICES;

export const when = (iso: string | null | undefined) =>
  iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : "—";

export const badge = (value: string) =>
  html`<span class="badge badge-${value.toLowerCase()}">${value}</span>`;

const invoiceLink = (irn: string) =>
  html`<a href="/dashboard/invoices/${encodeURIComponent(irn)}">${irn}</a>`;

export const businessLink = (id: string, name: string) =>
  html`<a href="/dashboard/businesses/${encodeURIComponent(id)}">${name}</a>`;

export function page(title: string, section: Section | null, body: Html, notice?: string): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · E-invoicing operator</title>
<link rel="stylesheet" href="/dashboard/style.css">
</head>
<body>
<header>
  <a class="brand" href="/dashboard">E-invoicing <span>operator</span></a>
  ${
    section === null
      ? ""
      : html`<nav>${NAV.map(
          ([id, href, label]) =>
            html`<a href="${href}"${id === section ? html` aria-current="page"` : ""}>${label}</a>`,
        )}</nav>
  <form method="post" action="/dashboard/logout"><button class="link">Sign out</button></form>`
  }
</header>
<main>
<h1>${title}</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ""}
${body}
</main>
</body>
</html>`;
}

export function loginPage(next: string, error?: string): Html {
  return page(
    "Sign in",
    null,
    html`<form method="post" action="/dashboard/login" class="card narrow">
  ${error ? html`<p class="error" role="alert">${error}</p>` : ""}
  <label>Operator password <input type="password" name="password" autocomplete="current-password" required autofocus></label>
  <input type="hidden" name="next" value="${next}">
  <button>Sign in</button>
</form>`,
  );
}

/** `signedIn`: whether to show the navigation; `requestId`: the id the server's log has the error under. */
export function errorPage(err: DomainError, status: number, signedIn: boolean, requestId: string): Html {
  const problems = err.violations
    ? html`<ul class="error" role="alert">${err.violations.map((v) => html`<li><code>${v.path}</code> ${v.message}</li>`)}</ul>`
    : html`<p class="error" role="alert">${err.details}</p>`;
  return page(
    err.message,
    signedIn ? "overview" : null,
    html`${problems}<p class="muted">HTTP ${status} · request <code>${requestId}</code></p>`,
  );
}

function outboxTable(stats: Data<"overview">["outbox"]): Html {
  if (stats.length === 0) return html`<p class="muted">The outbox is empty: nothing was ever queued.</p>`;
  return html`<table>
<thead><tr><th>Kind</th><th>State</th><th class="num">Jobs</th><th class="num">In flight</th><th>Oldest</th></tr></thead>
<tbody>${stats.map(
    (s) =>
      html`<tr><td>${s.kind}</td><td>${badge(s.state)}</td><td class="num">${s.count}</td><td class="num">${s.in_flight}</td><td>${when(s.oldest)}</td></tr>`,
  )}</tbody>
</table>`;
}

/** The authority refuses our credential: every delivery waits on the probe (authority-hold.ts). */
function holdBanner(hold: Data<"overview">["hold"]): Html {
  if (!hold) return html``;
  return html`<div class="card alarm" id="authority-hold" role="alert"><div><strong>Deliveries to ${hold.authority} are paused</strong> since ${when(hold.since)}: it refuses this service's credentials. A call that carries no invoice asks whether the credentials are accepted again (next: ${when(hold.next_probe_at)}, ${hold.probes} so far); all deliveries resume once it passes. Fix the credentials in the environment.<br><span class="muted">${hold.reason}</span></div></div>`;
}

export function overviewPage(data: Data<"overview">): Html {
  const { totals } = data;
  return page(
    "Overview",
    "overview",
    html`<div class="tiles">
  <a class="tile" href="/dashboard/businesses"><strong>${totals.businesses}</strong> businesses</a>
  <div class="tile"><strong>${totals.active_keys}</strong> active credentials</div>
  <a class="tile" href="/dashboard/invoices"><strong>${totals.invoices}</strong> invoices signed</a>
  <a class="tile${data.failedTransmissions > 0 ? " alarm" : ""}" href="/dashboard/outbox"><strong>${data.failedTransmissions}</strong> failed transmissions</a>
</div>
<h2>Outbox</h2>
${holdBanner(data.hold)}
${outboxTable(data.outbox)}`,
  );
}

export function businessesPage(
  businesses: Data<"businesses">,
  form: { name?: string; tin?: string; error?: string } = {},
): Html {
  return page(
    "Businesses",
    "businesses",
    html`<table>
<thead><tr><th>Name</th><th>TIN</th><th>Service id</th><th>Business id</th><th class="num">Invoices</th><th>Added</th></tr></thead>
<tbody>${businesses.map(
      (b) =>
        html`<tr><td>${businessLink(b.id, b.name)}</td><td>${b.tin}</td><td><code>${b.service_id}</code></td><td><code>${b.id}</code></td><td class="num">${b.chain_length}</td><td>${when(b.created_at)}</td></tr>`,
    )}</tbody>
</table>
${businesses.length === 0 ? html`<p class="muted">No business yet.</p>` : ""}
<h2>Add a business</h2>
<form method="post" action="/dashboard/businesses" class="card inline">
  ${form.error ? html`<p class="error" role="alert">${form.error}</p>` : ""}
  <label>Name <input name="name" value="${form.name ?? ""}" required maxlength="200"></label>
  <label>TIN <input name="tin" value="${form.tin ?? ""}" required placeholder="12345678-0001" maxlength="40"></label>
  <button>Add business</button>
</form>`,
  );
}

/** The business's received invoices by status, each count a link to them. */
function receivedCounts(id: string, counts: Data<"business">["received"]): Html {
  const inbox = `/dashboard/businesses/${encodeURIComponent(id)}/inbox`;
  const tiles = [
    ["RECEIVED", "awaiting a decision"],
    ["ACKNOWLEDGED", "acknowledged"],
    ["REJECTED", "rejected"],
  ] as const;
  return html`<h2>Received invoices</h2>
<div class="tiles" id="received-counts">${tiles.map(
    ([status, label]) =>
      html`<a class="tile" href="${inbox}?status=${status}"><strong>${counts[status]}</strong> ${label}</a>`,
  )}</div>
<p><a href="${inbox}">All invoices received as the buyer →</a></p>`;
}

export function businessPage(data: Data<"business">, notice?: string): Html {
  const { business: b, keys } = data;
  return page(
    b.name,
    "businesses",
    html`<dl class="facts">
  <dt>Business id</dt><dd><code>${b.id}</code></dd>
  <dt>TIN</dt><dd>${b.tin}</dd>
  <dt>Service id</dt><dd><code>${b.service_id}</code></dd>
  <dt>Invoices signed</dt><dd>${b.chain_length} · <a href="/dashboard/invoices?business_id=${encodeURIComponent(b.id)}">list them</a></dd>
  <dt>Chain head</dt><dd><code>${b.chain_head ?? "—"}</code></dd>
  <dt>Added</dt><dd>${when(b.created_at)}</dd>
</dl>
<h2>Credentials</h2>
<table>
<thead><tr><th>API key</th><th>Created</th><th>State</th><th></th></tr></thead>
<tbody>${keys.map(
      (k) =>
        html`<tr><td><code>${k.api_key}</code></td><td>${when(k.created_at)}</td><td>${
          k.revoked_at ? html`${badge("revoked")} ${when(k.revoked_at)}` : badge("active")
        }</td><td>${
          k.revoked_at
            ? ""
            : html`<form method="post" action="/dashboard/keys/${encodeURIComponent(k.api_key)}/revoke"><button class="danger">Revoke</button></form>`
        }</td></tr>`,
    )}</tbody>
</table>
${keys.length === 0 ? html`<p class="muted">No credential yet.</p>` : ""}
<form method="post" action="/dashboard/businesses/${encodeURIComponent(b.id)}/keys" class="actions"><button>Create a credential</button></form>
${receivedCounts(b.id, data.received)}`,
    notice,
  );
}

export function newKeyPage(
  business: { id: string; name: string },
  key: { api_key: string; api_secret: string },
): Html {
  return page(
    "New credential",
    "businesses",
    html`<p>For ${businessLink(business.id, business.name)}. The secret is shown this once and is not stored: copy it now.</p>
<dl class="facts secret">
  <dt>API-KEY</dt><dd><code id="api-key">${key.api_key}</code></dd>
  <dt>API-SECRET</dt><dd><code id="api-secret">${key.api_secret}</code></dd>
</dl>
<p><a href="/dashboard/businesses/${encodeURIComponent(business.id)}">Back to ${business.name}</a></p>`,
  );
}

export function options(values: readonly string[], selected: string | undefined, any: string): Html {
  return html`<option value="">${any}</option>${values.map(
    (v) => html`<option${v === selected ? html` selected` : ""}>${v}</option>`,
  )}`;
}

export function invoicesPage(
  query: InvoiceFilter,
  data: Data<"invoices">,
  businesses: Data<"businesses">,
): Html {
  const next = data.next
    ? `/dashboard/invoices?${new URLSearchParams({
        ...Object.fromEntries(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined)),
        after: data.next.signed_at,
        after_irn: data.next.irn,
      })}`
    : undefined;
  return page(
    "Invoices",
    "invoices",
    html`<form method="get" action="/dashboard/invoices" class="card filters">
  <label>IRN <input name="irn" value="${query.irn ?? ""}" placeholder="the IRN or its beginning"></label>
  <label>TIN <input name="tin" value="${query.tin ?? ""}" placeholder="supplier or customer"></label>
  <label>Business <select name="business_id"><option value="">any</option>${businesses.map(
    (b) =>
      html`<option value="${b.id}"${b.id === query.business_id ? html` selected` : ""}>${b.name}</option>`,
  )}</select></label>
  <label>Status <select name="status">${options(INVOICE_STATUSES, query.status, "any")}</select></label>
  <label>Payment <select name="payment_status">${options(PAYMENT_STATUSES, query.payment_status, "any")}</select></label>
  <label>Issued from <input type="date" name="from" value="${query.from ?? ""}"></label>
  <label>to <input type="date" name="to" value="${query.to ?? ""}"></label>
  <button>Search</button> <a href="/dashboard/invoices">Clear</a>
</form>
<table id="invoices">
<thead><tr><th>IRN</th><th>Business</th><th>Status</th><th>Payment</th><th>Issued</th><th>Supplier TIN</th><th>Customer TIN</th><th>Signed</th></tr></thead>
<tbody>${data.rows.map(
      (r) =>
        html`<tr><td>${invoiceLink(r.irn)}</td><td>${businessLink(r.business_id, r.business_name)}</td><td>${badge(r.status)}</td><td>${badge(r.payment_status)}</td><td>${r.issue_date}</td><td>${r.supplier_tin ?? "—"}</td><td>${r.customer_tin ?? "—"}</td><td>${when(r.signed_at)}</td></tr>`,
    )}</tbody>
</table>
${data.rows.length === 0 ? html`<p class="muted">No invoice matches.</p>` : ""}
${next ? html`<p><a rel="next" href="${next}">Older invoices →</a></p>` : ""}`,
  );
}

/** A history, sent or received invoice's alike: when, what, who, and the entry's details. */
export function historyTable(
  history: ReadonlyArray<{ at: string; type: string; actor: string | null; detail: Record<string, unknown> }>,
): Html {
  return html`<table id="history">
<thead><tr><th>At</th><th>Event</th><th>Actor</th><th>Detail</th></tr></thead>
<tbody>${history.map(
    (e) =>
      html`<tr><td>${when(e.at)}</td><td>${e.type}</td><td><code>${e.actor}</code></td><td><code>${
        Object.keys(e.detail).length > 0 ? JSON.stringify(e.detail) : ""
      }</code></td></tr>`,
  )}</tbody>
</table>`;
}

function requeueForm(irn: string, back: "invoice" | "outbox"): Html {
  return html`<form method="post" action="/dashboard/invoices/${encodeURIComponent(irn)}/requeue">
  <input type="hidden" name="back" value="${back}"><button>Re-queue</button></form>`;
}

/** `line`: the first of the document's lines to show (`?line=`). */
export function invoicePage(data: Data<"invoice">, notice?: string, line?: number): Html {
  const { record: r, qr, jobs } = data;
  const currency = r.document.document_currency_code;
  const digits = currencyDigits(currency);
  const money = (amount: unknown) =>
    typeof amount === "number" ? `${amount.toFixed(digits)} ${String(currency)}` : "—";
  // The payments among the history's payment entries: those that carry an amount.
  const payments = r.history.filter((e) => e.type === "payment_updated" && e.detail.amount !== undefined);
  return page(
    r.irn,
    "invoices",
    html`<div class="split">
<dl class="facts">
  <dt>Business</dt><dd>${businessLink(r.business_id, data.businessName)}</dd>
  <dt>Status</dt><dd>${badge(r.status)}</dd>
  <dt>Payment</dt><dd>${badge(r.payment_status)}${r.payment_reference ? html` · ${r.payment_reference}` : ""}</dd>
  <dt>Paid</dt><dd id="amount-paid">${money(r.amount_paid)}</dd>
  <dt>Outstanding</dt><dd id="amount-outstanding">${money(r.amount_outstanding)}</dd>
  <dt>Invoice type</dt><dd>${r.invoice_type_code}</dd>
  <dt>Issued</dt><dd>${r.issue_date}</dd>
  <dt>Signed</dt><dd>${when(r.signed_at)}</dd>
  <dt>Transmitted</dt><dd>${when(r.transmitted_at)}</dd>
  <dt>Authority reference</dt><dd>${r.authority_reference ?? "—"}</dd>
  <dt>Signature</dt><dd>${r.signature ? html`${r.signature.alg} · key <code>${r.signature.kid}</code>` : "—"}</dd>
  <dt>Hash</dt><dd><code>${r.signature?.hash ?? "—"}</code></dd>
  <dt>Previous hash</dt><dd><code>${r.previous_hash ?? "— (first of its chain)"}</code></dd>
  <dt>UBL 2.1</dt><dd><a id="ubl" href="/dashboard/invoices/${encodeURIComponent(r.irn)}/xml">Download the invoice as UBL</a></dd>
</dl>
<figure class="qr"><img src="${qr}" alt="QR code of ${r.irn}" width="240" height="240"><figcaption>The QR code printed on the invoice</figcaption></figure>
</div>
${r.status === "TRANSMISSION_FAILED" ? html`<div class="card alarm">The authority did not take this invoice. ${requeueForm(r.irn, "invoice")}</div>` : ""}
<h2>Payments</h2>
${
  payments.length === 0
    ? html`<p class="muted">None recorded.</p>`
    : html`<table id="payments">
<thead><tr><th>Paid on</th><th class="num">Amount</th><th>Reference</th><th class="num">Paid after</th><th class="num">Outstanding after</th><th>Status after</th><th>Recorded</th><th>Actor</th></tr></thead>
<tbody>${payments.map(
        (e) =>
          html`<tr><td>${String(e.detail.payment_update_date ?? "—")}</td><td class="num">${money(e.detail.amount)}</td><td>${typeof e.detail.reference === "string" ? e.detail.reference : "—"}</td><td class="num">${money(e.detail.amount_paid)}</td><td class="num">${money(e.detail.amount_outstanding)}</td><td>${badge(String(e.detail.to))}</td><td>${when(e.at)}</td><td><code>${e.actor}</code></td></tr>`,
      )}</tbody>
</table>`
}
<h2>History</h2>
${historyTable(r.history)}
<h2>Outbox jobs</h2>
${
  jobs.length === 0
    ? html`<p class="muted">None: this invoice was never queued for transmission.</p>`
    : html`<table>
<thead><tr><th>Job</th><th>Kind</th><th>State</th><th class="num">Attempts</th><th>Next attempt</th><th>Last error</th><th>Updated</th></tr></thead>
<tbody>${jobs.map(
        (j) =>
          html`<tr><td>${j.id}</td><td>${j.kind}</td><td>${badge(j.state)}</td><td class="num">${j.attempts}</td><td>${j.state === "pending" ? when(j.next_attempt_at) : "—"}</td><td>${j.last_error ?? ""}</td><td>${when(j.updated_at)}</td></tr>`,
      )}</tbody>
</table>`
}
${documentSection(r.document, line, (at) => `/dashboard/invoices/${encodeURIComponent(r.irn)}?line=${at}`)}`,
    notice,
  );
}

export function outboxPage(data: Data<"outbox">, notice?: string): Html {
  return page(
    "Outbox",
    "outbox",
    html`${holdBanner(data.hold)}
${outboxTable(data.stats)}
<h2>Failed transmissions</h2>
${
  data.failedTransmissions.length === 0
    ? html`<p class="muted">None: every transmission was delivered or is still being tried.</p>`
    : html`<table id="failed-transmissions">
<thead><tr><th>IRN</th><th>Business</th><th class="num">Attempts</th><th>Last error</th><th>Failed</th><th></th></tr></thead>
<tbody>${data.failedTransmissions.map(
        (f) =>
          html`<tr><td>${invoiceLink(f.irn)}</td><td>${businessLink(f.business_id, f.business_name)}</td><td class="num">${f.attempts}</td><td>${f.last_error ?? ""}</td><td>${when(f.failed_at)}</td><td>${requeueForm(f.irn, "outbox")}</td></tr>`,
      )}</tbody>
</table>`
}
<h2>Failed webhook events</h2>
${
  data.failedWebhooks.length === 0
    ? html`<p class="muted">None.</p>`
    : html`<table>
<thead><tr><th>Job</th><th>Business</th><th>IRN</th><th class="num">Attempts</th><th>Last error</th><th>Failed</th></tr></thead>
<tbody>${data.failedWebhooks.map(
        (w) =>
          html`<tr><td>${w.id}</td><td><a href="/dashboard/businesses/${encodeURIComponent(w.business_id)}"><code>${w.business_id}</code></a></td><td>${w.irn ? invoiceLink(w.irn) : "—"}</td><td class="num">${w.attempts}</td><td>${w.last_error ?? ""}</td><td>${when(w.updated_at)}</td></tr>`,
      )}</tbody>
</table>`
}`,
    notice,
  );
}
