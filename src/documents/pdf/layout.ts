import { FONT } from "./fonts.ts";

/** Millimetres to PDF points (1/72 inch). */
export const mm = (millimetres: number): number => (millimetres * 72) / 25.4;

/** A4 portrait, in points. */
export const PAGE = { width: 595.28, height: 841.89, margin: 40 } as const;
export const CONTENT_WIDTH = PAGE.width - 2 * PAGE.margin;
/** The footer's rule; the footer (signature, page number) sits below it on every page. */
export const FOOTER_TOP = PAGE.height - 58;
/** Where the body stops; a row that would cross it goes to the next page. */
export const BODY_BOTTOM = FOOTER_TOP - 8;
/** Where the body starts on every page after the first, below the continuation line. */
const CONTINUED_TOP = PAGE.margin + 18;
/** The tallest any one block may be: what a continuation page holds. */
export const BODY_HEIGHT = BODY_BOTTOM - CONTINUED_TOP;

export const COLOR = { text: "#1a1a1a", muted: "#5f6368", rule: "#c8ccd0", band: "#eef1f4" } as const;

export type Style = { bold?: boolean; size: number; color?: string };
export type Align = "left" | "right";

export const STYLE = {
  body: { size: 8.5 },
  label: { size: 7.5, color: COLOR.muted },
  cell: { size: 8 },
  cellDetail: { size: 7, color: COLOR.muted },
  cellHead: { bold: true, size: 7.5 },
  heading: { bold: true, size: 9.5 },
} as const satisfies Record<string, Style>;

function use(doc: PDFKit.PDFDocument, style: Style): void {
  doc
    .font(style.bold ? FONT.bold : FONT.regular)
    .fontSize(style.size)
    .fillColor(style.color ?? COLOR.text);
}

/** How a text sits in a box: its height, and its width when it is one line (drawn unwrapped). */
export type Fitted = { height: number; oneLine: number | undefined };

/**
 * Fits the text to the width, capped at a page's body (write clips at the same). A text that is
 * one line is drawn without pdfkit's line wrapper, which most cells are: that halves a table's time.
 */
export function fit(doc: PDFKit.PDFDocument, style: Style, value: string, width: number): Fitted {
  if (value === "") return { height: 0, oneLine: 0 };
  use(doc, style);
  const oneLine = value.includes("\n") ? Number.POSITIVE_INFINITY : doc.widthOfString(value);
  if (oneLine <= width) return { height: doc.currentLineHeight(true), oneLine };
  return { height: Math.min(doc.heightOfString(value, { width }), BODY_HEIGHT), oneLine: undefined };
}

export const measure = (doc: PDFKit.PDFDocument, style: Style, value: string, width: number): number =>
  fit(doc, style, value, width).height;

/** Draws the text in a box of this width from (x, y), wrapped; `fitted` when already measured. */
export function write(
  doc: PDFKit.PDFDocument,
  style: Style,
  value: string,
  box: { x: number; y: number; width: number; align?: Align },
  fitted: Fitted = fit(doc, style, value, box.width),
): void {
  if (value === "") return;
  use(doc, style);
  const { x, y, width, align = "left" } = box;
  if (fitted.oneLine !== undefined) {
    doc.text(value, align === "right" ? x + width - fitted.oneLine : x, y, { lineBreak: false });
    return;
  }
  doc.text(value, x, y, { width, align, height: BODY_HEIGHT, ellipsis: true });
}

export function rule(
  doc: PDFKit.PDFDocument,
  x: number,
  y: number,
  width: number,
  color: string = COLOR.rule,
) {
  doc
    .moveTo(x, y)
    .lineTo(x + width, y)
    .lineWidth(0.5)
    .strokeColor(color)
    .stroke();
}

/**
 * The body's flow down the pages: where the next block goes, and what a new page starts with (the
 * continuation line and, inside a table, the table's header again).
 */
export type Flow = {
  doc: PDFKit.PDFDocument;
  y: number;
  continuation: string;
  onNewPage: (() => void) | null;
};

export function newPage(flow: Flow): void {
  flow.doc.addPage();
  write(flow.doc, STYLE.label, flow.continuation, { x: PAGE.margin, y: PAGE.margin, width: CONTENT_WIDTH });
  flow.y = CONTINUED_TOP;
  flow.onNewPage?.();
}

/** Starts a new page unless `height` fits below the flow (or a fresh page would not help). */
export function room(flow: Flow, height: number): void {
  if (flow.y + height > BODY_BOTTOM && flow.y > CONTINUED_TOP) newPage(flow);
}

export type Column = { title: string; width: number; align?: Align };
/** A cell: one or more texts stacked (a line's item name above its description). */
export type Cell = string | { value: string; style: Style }[];

const PAD = { x: 3, y: 3 };

function runs(cell: Cell): { value: string; style: Style }[] {
  return typeof cell === "string" ? [{ value: cell, style: STYLE.cell }] : cell;
}

type Run = { value: string; style: Style; fitted: Fitted };
type Row = { runs: Run[][]; height: number };

/** Measures each text of a row once: the row's height, and how each text is drawn. */
function fitRow(doc: PDFKit.PDFDocument, columns: Column[], cells: Cell[]): Row {
  let tallest = 0;
  const fitted = columns.map((column, index) => {
    let height = 0;
    const texts = runs(cells[index] ?? "").map((run) => {
      const one = fit(doc, run.style, run.value, column.width - 2 * PAD.x);
      height += one.height;
      return { ...run, fitted: one };
    });
    tallest = Math.max(tallest, height);
    return texts;
  });
  return { runs: fitted, height: tallest + 2 * PAD.y };
}

function drawRow(flow: Flow, columns: Column[], row: Row): void {
  let x = PAGE.margin;
  columns.forEach((column, index) => {
    let y = flow.y + PAD.y;
    const width = column.width - 2 * PAD.x;
    for (const run of row.runs[index] ?? []) {
      write(flow.doc, run.style, run.value, { x: x + PAD.x, y, width, align: column.align }, run.fitted);
      y += run.fitted.height;
    }
    x += column.width;
  });
  flow.y += row.height;
}

/** A section's title, kept on one page with the first `keepWith` points of what follows it. */
export function heading(flow: Flow, value: string, keepWith: number): void {
  const height = measure(flow.doc, STYLE.heading, value, CONTENT_WIDTH) + 4;
  flow.y += 10;
  room(flow, height + keepWith);
  write(flow.doc, STYLE.heading, value, { x: PAGE.margin, y: flow.y, width: CONTENT_WIDTH });
  flow.y += height;
}

/**
 * A table down the pages: a row never splits, and every page it continues on starts with its header.
 * The title and the header are kept with the first row, so that neither ends a page alone.
 */
export function table(flow: Flow, columns: Column[], rows: Cell[][], title?: string): void {
  const { doc } = flow;
  const head = fitRow(
    doc,
    columns,
    columns.map((column) => [{ value: column.title, style: STYLE.cellHead }]),
  );
  const header = () => {
    doc.rect(PAGE.margin, flow.y, CONTENT_WIDTH, head.height).fill(COLOR.band);
    drawRow(flow, columns, head);
  };
  const first = rows[0];
  const keepWith = head.height + (first ? fitRow(doc, columns, first).height : 0);
  if (title) heading(flow, title, keepWith);
  else room(flow, keepWith);
  header();
  flow.onNewPage = header;
  for (const cells of rows) {
    const row = fitRow(doc, columns, cells);
    room(flow, row.height);
    drawRow(flow, columns, row);
    rule(doc, PAGE.margin, flow.y, CONTENT_WIDTH);
  }
  flow.onNewPage = null;
}
