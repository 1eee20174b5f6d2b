import QRCode from "qrcode";
import { COLOR, mm, STYLE, write } from "./layout.ts";

/**
 * The platform QR code's printed width, without its quiet zone: at least 30 mm, so that a phone
 * reads an RSA-2048 code from paper (344 characters: version 20 at error correction H, 97 modules
 * a side, 0.36 mm each at this size).
 */
export const PLATFORM_QR_SIZE = mm(35);
/** The verification code (a ~400-character token at error correction M: 77 modules) needs less. */
export const VERIFICATION_QR_SIZE = mm(30);

/**
 * Draws a QR code as vector squares, one rectangle per run of dark modules in a row. A PNG from
 * `QRCode.toBuffer`, which pdfkit then decodes again (and splits off its alpha channel), measured
 * 35 ms per platform code against 4 ms for the module matrix alone: the vector form costs only the
 * matrix and prints sharp at any resolution. Returns false when the text cannot be a QR code
 * (empty, or too long for one).
 */
export function drawQr(
  doc: PDFKit.PDFDocument,
  value: string,
  level: "H" | "M",
  at: { x: number; y: number; size: number },
): boolean {
  let modules: QRCode.BitMatrix;
  try {
    modules = QRCode.create(value, { errorCorrectionLevel: level }).modules;
  } catch {
    doc.rect(at.x, at.y, at.size, at.size).lineWidth(0.5).strokeColor(COLOR.rule).stroke();
    write(doc, STYLE.label, "QR code unavailable", {
      x: at.x + 4,
      y: at.y + at.size / 2 - 4,
      width: at.size - 8,
    });
    return false;
  }
  const n = modules.size;
  const unit = at.size / n;
  for (let row = 0; row < n; row++) {
    let col = 0;
    while (col < n) {
      if (!modules.data[row * n + col]) {
        col += 1;
        continue;
      }
      const start = col;
      while (col < n && modules.data[row * n + col]) col += 1;
      doc.rect(at.x + start * unit, at.y + row * unit, (col - start) * unit, unit);
    }
  }
  // One fill for the whole symbol: adjacent squares of one path leave no hairline seams when rendered.
  doc.fill("#000000");
  return true;
}
