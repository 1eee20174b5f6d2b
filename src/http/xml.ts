/** True when the Accept header prefers XML over JSON (by q-value, then by order). */
export function prefersXml(accept: string | undefined): boolean {
  if (!accept) return false;
  let best: { xml: boolean; q: number } | undefined;
  for (const part of accept.split(",")) {
    const [type = "", ...params] = part.trim().toLowerCase().split(";");
    const xml = type === "application/xml" || type === "text/xml";
    if (!xml && type !== "application/json") continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0) continue;
    if (!best || q > best.q) best = { xml, q };
  }
  return best?.xml ?? false;
}

function escapeXml(text: string): string {
  return text.replace(
    /[<>&'"]/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&apos;", '"': "&quot;" })[c] as string,
  );
}

/** `<response><code>200</code><data><item><code>…</code>…</item></data></response>` */
export function referenceXml(items: readonly Record<string, string>[]): string {
  const body = items
    .map(
      (item) =>
        `<item>${Object.entries(item)
          .map(([k, v]) => `<${k}>${escapeXml(v)}</${k}>`)
          .join("")}</item>`,
    )
    .join("");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<response><code>200</code><data>${body}</data></response>\n`;
}
