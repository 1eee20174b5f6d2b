/** The dashboard's stylesheet (and the verification page's base): served at /dashboard/style.css. */
export const STYLE = `
:root { --ink: #1d2433; --muted: #667085; --line: #e4e7ec; --brand: #0b6e4f; --alarm: #b42318; --bg: #f7f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #fff; border-bottom: 1px solid var(--line); }
header nav { display: flex; gap: 16px; flex: 1; }
header a { color: var(--ink); text-decoration: none; }
header nav a[aria-current] { color: var(--brand); font-weight: 600; border-bottom: 2px solid var(--brand); }
.brand { font-weight: 700; } .brand span { color: var(--brand); font-weight: 500; }
main { padding: 8px 24px 48px; max-width: 1280px; }
h1 { font-size: 20px; word-break: break-all; } h2 { font-size: 16px; margin-top: 28px; }
a { color: var(--brand); }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td code { word-break: break-all; }
.num { text-align: right; }
.muted { color: var(--muted); }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 14px; margin: 12px 0; }
.card.narrow { max-width: 360px; display: grid; gap: 12px; }
.card.inline, .filters { display: flex; flex-wrap: wrap; gap: 12px; align-items: end; }
.card.alarm { border-color: var(--alarm); display: flex; gap: 16px; align-items: center; }
label { display: grid; gap: 4px; font-size: 12px; color: var(--muted); }
input, select { font: inherit; padding: 5px 8px; border: 1px solid #cfd4dc; border-radius: 4px; color: var(--ink); }
button { font: inherit; padding: 6px 12px; border-radius: 4px; border: 1px solid var(--brand); background: var(--brand); color: #fff; cursor: pointer; }
button.danger { background: #fff; color: var(--alarm); border-color: var(--alarm); }
button.link { background: none; border: none; color: var(--muted); padding: 0; }
form { margin: 0; } form.actions { margin-top: 12px; }
.notice { background: #ecfdf3; border: 1px solid #abefc6; padding: 8px 12px; border-radius: 4px; }
.error { color: var(--alarm); margin: 0; }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: 12px; }
.tile { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 14px; color: var(--muted); text-decoration: none; }
.tile strong { display: block; font-size: 26px; color: var(--ink); }
.tile.alarm strong { color: var(--alarm); }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; word-break: break-all; }
.secret code { font-size: 15px; background: #fffbeb; padding: 2px 6px; }
.split { display: flex; gap: 24px; align-items: flex-start; } .split .facts { flex: 1; }
.qr { margin: 0; text-align: center; color: var(--muted); font-size: 12px; }
.qr img { display: block; background: #fff; border: 1px solid var(--line); }
.document { background: #fff; border: 1px solid var(--line); padding: 12px; overflow: auto; max-height: 480px; font-size: 12px; }
pre.line { margin: 0; font-size: 12px; white-space: pre-wrap; word-break: break-all; }
.pager { display: flex; gap: 16px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; background: #eef2f6; }
.badge-transmitted, .badge-paid, .badge-active, .badge-done { background: #dcfae6; color: #085d3a; }
.badge-transmission_failed, .badge-rejected, .badge-failed, .badge-revoked { background: #fee4e2; color: var(--alarm); }
.badge-transmitting, .badge-pending, .badge-partial { background: #fef0c7; color: #93370d; }
.badge-acknowledged, .badge-sent, .badge-not_needed { background: #dcfae6; color: #085d3a; }
.badge-received, .badge-queued { background: #fef0c7; color: #93370d; }
.card.decide { display: flex; flex-wrap: wrap; gap: 16px; align-items: end; }
.card.decide form { display: flex; gap: 8px; align-items: end; }
.card.decide input[name=reason] { min-width: 280px; }
.warned { color: var(--alarm); font-weight: 600; }
`;
