import {
  COLOR,
  CONTENT_WIDTH,
  type Column,
  type Flow,
  FOOTER_TOP,
  heading,
  measure,
  PAGE,
  room,
  rule,
  STYLE,
  type Style,
  table,
  write,
} from "./layout.ts";
import { drawQr, PLATFORM_QR_SIZE, VERIFICATION_QR_SIZE } from "./qr.ts";
import type { InvoiceView, Pair, Party } from "./view.ts";

const GAP = 14;
/** The right-hand column of the first page holds the two QR codes; the rest of the top is left of it. */
const QR_COLUMN = PLATFORM_QR_SIZE;
const LEFT_WIDTH = CONTENT_WIDTH - QR_COLUMN - GAP;
const TITLE: Style = { bold: true, size: 18 };
const CAPTION: Style = { size: 7, color: COLOR.muted };

/** Label and value side by side, each wrapped in its own column; returns the bottom. */
function pairs(
  doc: PDFKit.PDFDocument,
  rows: Pair[],
  x: number,
  y: number,
  widths: [number, number],
): number {
  let at = y;
  for (const [label, value] of rows) {
    write(doc, STYLE.label, label, { x, y: at + 1, width: widths[0] });
    write(doc, STYLE.body, value, { x: x + widths[0], y: at, width: widths[1] });
    at +=
      Math.max(measure(doc, STYLE.label, label, widths[0]), measure(doc, STYLE.body, value, widths[1])) + 2;
  }
  return at;
}

/** Stacked texts from (x, y) in one column; returns the bottom. */
function stack(
  doc: PDFKit.PDFDocument,
  texts: [Style, string][],
  x: number,
  y: number,
  width: number,
): number {
  let at = y;
  for (const [style, value] of texts) {
    write(doc, style, value, { x, y: at, width });
    at += measure(doc, style, value, width);
  }
  return at;
}

function partyBlock(doc: PDFKit.PDFDocument, party: Party, x: number, y: number, width: number): number {
  return stack(
    doc,
    [
      [STYLE.label, party.role.toUpperCase()],
      [{ bold: true, size: 9.5 }, party.name],
      ...party.lines.map((line): [Style, string] => [STYLE.body, line]),
    ],
    x,
    y,
    width,
  );
}

/** The two codes, the platform's above the verification one, each with its caption; returns the bottom. */
function qrColumn(doc: PDFKit.PDFDocument, codes: NonNullable<InvoiceView["codes"]>, y: number): number {
  const x = PAGE.margin + CONTENT_WIDTH - QR_COLUMN;
  const caption = (value: string, at: number) => {
    write(doc, CAPTION, value, { x, y: at, width: QR_COLUMN, align: "right" });
    return at + measure(doc, CAPTION, value, QR_COLUMN);
  };
  drawQr(doc, codes.platform, "H", { x, y, size: PLATFORM_QR_SIZE });
  let at = caption("Tax authority QR code (IRN)", y + PLATFORM_QR_SIZE + 5) + 10;
  const offset = QR_COLUMN - VERIFICATION_QR_SIZE;
  drawQr(doc, codes.verification, "M", { x: x + offset, y: at, size: VERIFICATION_QR_SIZE });
  at = caption("Scan with a phone to verify", at + VERIFICATION_QR_SIZE + 5);
  return at;
}

/** A received invoice's line on a band: where it came from and where it stands; returns the bottom. */
function receiptBand(doc: PDFKit.PDFDocument, value: string, y: number, width: number): number {
  const height = measure(doc, STYLE.body, value, width - 12) + 8;
  doc.rect(PAGE.margin, y, width, height).fill(COLOR.band);
  write(doc, STYLE.body, value, { x: PAGE.margin + 6, y: y + 4, width: width - 12 });
  return y + height;
}

/**
 * The first page's top: title, the invoice's facts, both parties, and the QR codes on the right. A
 * received invoice has no codes of this service: its line of receipt under the title, and its facts
 * over the whole width.
 */
export function header(flow: Flow, view: InvoiceView): void {
  const { doc } = flow;
  const top = PAGE.margin;
  const left = view.codes ? LEFT_WIDTH : CONTENT_WIDTH;
  let y = stack(doc, [[TITLE, view.title]], PAGE.margin, top, left) + 6;
  if (view.receipt) y = receiptBand(doc, view.receipt, y, left) + 8;
  y = pairs(doc, view.meta, PAGE.margin, y, [82, left - 82]) + 14;
  const partyWidth = (left - GAP) / 2;
  const seller = partyBlock(doc, view.seller, PAGE.margin, y, partyWidth);
  const buyer = partyBlock(doc, view.buyer, PAGE.margin + partyWidth + GAP, y, partyWidth);
  const qrBottom = view.codes ? qrColumn(doc, view.codes, top) : top;
  flow.y = Math.max(seller, buyer, qrBottom) + 16;
}

const LINE_COLUMNS: Column[] = [
  { title: "#", width: 24 },
  { title: "Description", width: 136 },
  { title: "HS / ISIC", width: 58 },
  { title: "Qty", width: 34, align: "right" },
  { title: "Unit", width: 68 },
  { title: "Unit price", width: 62, align: "right" },
  { title: "Discount", width: 56, align: "right" },
  { title: "Amount", width: CONTENT_WIDTH - 438, align: "right" },
];

/** The lines: the item's name, its description beneath it in smaller type. */
export function lines(flow: Flow, view: InvoiceView): void {
  const rows = view.lines.map((line) => [
    line.position,
    [
      { value: line.name, style: STYLE.cell },
      { value: line.detail, style: STYLE.cellDetail },
    ],
    line.code,
    line.quantity,
    line.unit,
    line.unitPrice,
    line.discount,
    line.amount,
  ]);
  table(flow, LINE_COLUMNS, rows);
}

/** Allowances and charges on the whole invoice, then the tax by category and rate. */
export function adjustments(flow: Flow, view: InvoiceView): void {
  if (view.allowanceCharges.length > 0) {
    const columns: Column[] = [
      { title: "Type", width: 110 },
      { title: "Reason", width: CONTENT_WIDTH - 230 },
      { title: "Amount", width: 120, align: "right" },
    ];
    table(flow, columns, view.allowanceCharges, "Allowances and charges");
  }
  if (view.taxes.length > 0) {
    const columns: Column[] = [
      { title: "Category", width: CONTENT_WIDTH - 300 },
      { title: "Rate", width: 60, align: "right" },
      { title: "Taxable amount", width: 120, align: "right" },
      { title: "Tax amount", width: 120, align: "right" },
    ];
    table(flow, columns, view.taxes, "Tax");
  }
}

/** The totals, right-aligned and kept together on one page; the amount payable last, in bold. */
export function totals(flow: Flow, view: InvoiceView): void {
  if (view.totals.length === 0) return;
  const { doc } = flow;
  const width = 270;
  const x = PAGE.margin + CONTENT_WIDTH - width;
  const label = width - 110;
  const rows = view.totals.map((total) => {
    const style: Style = total.strong ? { bold: true, size: 10 } : STYLE.body;
    const height = Math.max(measure(doc, style, total.label, label), measure(doc, style, total.value, 110));
    return { ...total, style, height: height + (total.strong ? 8 : 3) };
  });
  flow.y += 12;
  room(
    flow,
    rows.reduce((sum, row) => sum + row.height, 0),
  );
  for (const row of rows) {
    if (row.strong) {
      rule(doc, x, flow.y, width, COLOR.text);
      flow.y += 4;
    }
    write(doc, row.style, row.label, { x, y: flow.y, width: label });
    write(doc, row.style, row.value, { x: x + label, y: flow.y, width: 110, align: "right" });
    flow.y += row.height - (row.strong ? 4 : 0);
  }
}

function paragraphBlock(flow: Flow, title: string, value: string): void {
  const height = measure(flow.doc, STYLE.body, value, CONTENT_WIDTH);
  heading(flow, title, height);
  write(flow.doc, STYLE.body, value, { x: PAGE.margin, y: flow.y, width: CONTENT_WIDTH });
  flow.y += height;
}

/** How to pay (means and due dates), the payment terms, and the note. */
export function payment(flow: Flow, view: InvoiceView): void {
  if (view.payment.length > 0) {
    heading(flow, "Payment", measure(flow.doc, STYLE.body, view.payment[0]?.[1] ?? "", CONTENT_WIDTH - 100));
    for (const pair of view.payment) {
      room(flow, measure(flow.doc, STYLE.body, pair[1], CONTENT_WIDTH - 100) + 2);
      flow.y = pairs(flow.doc, [pair], PAGE.margin, flow.y, [100, CONTENT_WIDTH - 100]);
    }
  }
  if (view.terms) paragraphBlock(flow, "Payment terms", view.terms);
  if (view.note) paragraphBlock(flow, "Note", view.note);
}

/**
 * The footer of every page, written once all pages exist (pdfkit keeps them buffered): the
 * signature's key id and hash, which may be long, in small type, and "page N of M".
 */
export function footers(doc: PDFKit.PDFDocument, view: InvoiceView): void {
  const { start, count } = doc.bufferedPageRange();
  const pageWidth = 70;
  const small: Style = { size: 6.5, color: COLOR.muted };
  for (let index = 0; index < count; index++) {
    doc.switchToPage(start + index);
    rule(doc, PAGE.margin, FOOTER_TOP, CONTENT_WIDTH);
    write(doc, small, view.signature, {
      x: PAGE.margin,
      y: FOOTER_TOP + 5,
      width: CONTENT_WIDTH - pageWidth,
    });
    write(doc, { size: 7.5 }, `page ${index + 1} of ${count}`, {
      x: PAGE.margin + CONTENT_WIDTH - pageWidth,
      y: FOOTER_TOP + 5,
      width: pageWidth,
      align: "right",
    });
  }
}
