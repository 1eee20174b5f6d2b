import QRCode from "qrcode";

/** Error correction H survives a smudged print; 320 px is legible from a receipt. */
const RENDER = { errorCorrectionLevel: "H", margin: 2, width: 320 } as const;

/**
 * The verification code holds a longer text (a signed token, or the page's URL with it): error
 * correction M keeps it a size a phone camera reads at arm's length.
 */
const VERIFICATION = { ...RENDER, errorCorrectionLevel: "M" } as const;

/** The renderings of a QR text: the API's images and the dashboard's. */
export const qrImage = {
  png: (text: string) => QRCode.toBuffer(text, { ...RENDER, type: "png" }),
  svg: (text: string) => QRCode.toString(text, { ...RENDER, type: "svg" }),
  dataUrl: (text: string) => QRCode.toDataURL(text, RENDER),
  verificationPng: (text: string) => QRCode.toBuffer(text, { ...VERIFICATION, type: "png" }),
  verificationSvg: (text: string) => QRCode.toString(text, { ...VERIFICATION, type: "svg" }),
};
