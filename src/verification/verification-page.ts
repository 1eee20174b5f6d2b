import { type Html, html } from "../html/html.ts";
import type { Verification } from "./verification-service.ts";

/** The stylesheet's address: the verification page is served whether or not the dashboard is on. */
export const VERIFY_STYLE = "/verify/style.css";

/** Extra rules of this page, on top of the dashboard's. */
export const VERIFY_STYLE_EXTRA = `
.verdict { font-size: 18px; font-weight: 600; padding: 12px 14px; border-radius: 6px; margin: 12px 0; }
.verdict.valid { background: #ecfdf3; border: 1px solid #abefc6; color: #085d3a; }
.verdict.invalid { background: #fef3f2; border: 1px solid #fecdca; color: var(--alarm); }
main { max-width: 720px; }
textarea { font: 12px ui-monospace, monospace; width: 100%; min-height: 90px; padding: 6px; border: 1px solid #cfd4dc; border-radius: 4px; }
`;

function layout(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · E-invoice verification</title>
<link rel="stylesheet" href="${VERIFY_STYLE}">
</head>
<body>
<header><span class="brand">E-invoice <span>verification</span></span></header>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

/** `693375.00` as `693,375.00`, whatever the digits; the token's text is shown, not a float of it. */
function grouped(amount: string): string {
  const match = /^(-?)(\d+)(\.\d+)?$/.exec(amount);
  if (!match) return amount;
  return `${match[1]}${(match[2] as string).replace(/\B(?=(\d{3})+(?!\d))/g, ",")}${match[3] ?? ""}`;
}

const form = (token = "") => html`<form method="get" action="/verify" class="card">
  <label>Verification token or scanned text <textarea name="t" required>${token}</textarea></label>
  <p><button>Verify</button></p>
</form>`;

const REASONS = {
  malformed: "This is not an invoice verification token: it may be cut short or come from another code.",
  unknown_key:
    "The token names a signing key this service does not publish: it was not issued here, or with a key since withdrawn.",
  bad_signature:
    "The signature does not match the token's content: the token was changed after it was issued, or was not issued by this service.",
} as const;

function verified(result: Extract<Verification, { valid: true }>): Html {
  const { claims } = result;
  const register = result.register;
  return html`<p class="verdict valid" role="status">✓ Genuine: this invoice was signed by this e-invoicing service.</p>
<dl class="facts card">
  <dt>Invoice (IRN)</dt><dd>${claims.irn}</dd>
  <dt>Seller's TIN</dt><dd>${claims.tin}</dd>
  <dt>Issue date</dt><dd>${claims.dt}</dd>
  <dt>Amount payable</dt><dd>${grouped(claims.amt)} ${claims.cur}</dd>
  <dt>Signed hash</dt><dd><code>${claims.h}</code></dd>
  <dt>Signing key</dt><dd><code>${result.kid}</code></dd>
  <dt>In this register</dt><dd>${
    register
      ? html`yes: ${register.status.replaceAll("_", " ").toLowerCase()}`
      : "not found here (the signature still proves what the token says)"
  }</dd>
</dl>
<p class="muted">Compare these facts with the printed invoice: a genuine token on an invoice whose IRN, amount or date differ does not vouch for it.</p>`;
}

/** The page for a token: its verified facts, or why it does not verify (never what an invalid token claims). */
export function verificationPage(token: string | undefined, result: Verification | undefined): Html {
  if (token === undefined || result === undefined) {
    return layout(
      "Verify an e-invoice",
      html`<p>Scan the verification QR code on the invoice with a phone's camera, or paste the token it holds.</p>${form()}`,
    );
  }
  if (result.valid) return layout("Invoice verified", verified(result));
  return layout(
    "Not verified",
    html`<p class="verdict invalid" role="alert">✗ Not verified. ${REASONS[result.reason]}</p>${form(token.slice(0, 4096))}`,
  );
}
