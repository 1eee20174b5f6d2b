import fs from "node:fs";
import { createRequire } from "node:module";
import * as fontkit from "fontkit";

/** The names the renderer selects its two faces by, once registered on a document. */
export const FONT = { regular: "body", bold: "body-bold" } as const;

type Faces = Record<keyof typeof FONT, fontkit.Font>;

let faces: Faces | undefined;

/**
 * DejaVu Sans: it covers the Yorùbá and Hausa letters (Ọ, Ẹ, Ṣ, Ɗ, Ƙ, Ɓ, with their combining
 * tones) and ₦, which the PDF standard fonts lack. Parsed once per process and shared by every
 * document: pdfkit parses a font it is given as bytes again for each document, and that parse (with
 * the layout tables it reads on first use) was three quarters of a one-page invoice's time.
 */
function loadFaces(): Faces {
  if (faces) return faces;
  const resolve = createRequire(import.meta.url).resolve;
  const open = (file: string): fontkit.Font => {
    const font = fontkit.create(fs.readFileSync(resolve(`dejavu-fonts-ttf/ttf/${file}`)));
    if (!("layout" in font)) throw new Error(`${file} is a font collection, not one font`);
    return font;
  };
  faces = { regular: open("DejaVuSans.ttf"), bold: open("DejaVuSans-Bold.ttf") };
  return faces;
}

/** Registers both faces on a new document, under FONT's names. */
export function registerFonts(doc: PDFKit.PDFDocument): void {
  const loaded = loadFaces();
  // pdfkit takes an already parsed fontkit font (it only needs its `layout`); its types name bytes only.
  doc.registerFont(FONT.regular, loaded.regular as unknown as Buffer);
  doc.registerFont(FONT.bold, loaded.bold as unknown as Buffer);
}
