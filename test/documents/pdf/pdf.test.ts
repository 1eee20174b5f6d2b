import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { readBarcodes } from "zxing-wasm/reader";
import { PLATFORM_QR_SIZE } from "../../../src/documents/pdf/qr.ts";
import { type InvoicePdfInput, renderInvoicePdf } from "../../../src/documents/pdf/render.ts";
import { loadQrDecoder } from "../../../src/qr/qr-image-decoder.ts";
import { type Json, tempDir } from "../../helpers.ts";
import {
  fullInvoice,
  HAUSA,
  lineName,
  manyLines,
  minimalInvoice,
  pdfInput,
  QR_TEXT,
  SIGNATURE,
  VERIFICATION_TEXT,
  YORUBA,
} from "./pdf-inputs.ts";

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const REFERENCE = path.join(HERE, "pdf-reference.png");

/** Debian's poppler-utils (pdftotext, pdftoppm) and ImageMagick's compare; CI installs both. */
const POPPLER = fs.existsSync("/usr/bin/pdftotext") && fs.existsSync("/usr/bin/pdftoppm");
const COMPARE = ["/usr/bin/compare", "/usr/bin/magick"].find((file) => fs.existsSync(file));
const withoutPoppler = POPPLER
  ? false
  : "no pdftotext/pdftoppm in /usr/bin (apt-get install -y poppler-utils): PDF test skipped";

async function rendered(dir: string, input: InvoicePdfInput, name = "invoice"): Promise<string> {
  const file = path.join(dir, `${name}.pdf`);
  fs.writeFileSync(file, await renderInvoicePdf(input));
  return file;
}

/** The PDF's text, one string per page (pdftotext ends each page with a form feed). */
async function pages(file: string, mode: "-layout" | "-raw" = "-layout"): Promise<string[]> {
  const { stdout } = await run("pdftotext", [mode, "-enc", "UTF-8", file, "-"], { maxBuffer: 64 << 20 });
  return stdout.split("\f").slice(0, -1);
}

/** Page 1 as a PNG at this resolution. */
async function pageImage(dir: string, file: string, dpi: number): Promise<string> {
  const prefix = path.join(dir, `page-${dpi}`);
  await run("pdftoppm", ["-r", String(dpi), "-png", "-f", "1", "-l", "1", "-singlefile", file, prefix]);
  return `${prefix}.png`;
}

const squash = (value: string) => value.replace(/\s+/g, " ");
const HEADER = /#\s+Description\s+HS \/ ISIC\s+Qty\s+Unit\s+Unit price\s+Discount\s+Amount/;

describe("invoice PDF", { skip: withoutPoppler }, () => {
  test("the full invoice's PDF holds every field the buyer needs", async (t) => {
    const [text = ""] = await pages(await rendered(tempDir(t), pdfInput(fullInvoice())));
    const expected: (string | RegExp)[] = [
      "Commercial Invoice",
      /Invoice number\s+INV0001\n/,
      /IRN\s+INV0001-AB12CD34-20261115/,
      /Status\s+TRANSMITTED/,
      /Issue date\s+2026-11-15 14:30:00/,
      /Due date\s+2026-12-15/,
      /Currency\s+NGN \(Nigerian Naira, ₦\)/,
      /SELLER\s+BUYER/,
      /Okafor Building Supplies Ltd\s+Lekki Homes Development Co/,
      /TIN: 20198222-0002\s+TIN: 31845560-0001/,
      /billing@okafor-supplies\.example\s+accounts@lekkihomes\.example/,
      /Tel: \+2348031234567\s+Tel: \+2348029876543/,
      /14 Aba Road\s+3 Faulks Road/,
      /Aba 450001\s+Aba 450002/,
      /Aba North LGA, Abia State\s+Aba South LGA, Abia State/,
      /Nigeria\s+Nigeria/,
      HEADER,
      // Each line: description, HS code, quantity, unit, unit price, discount, amount in one row.
      /1\s+Portland cement 50 kg\s+HS 2523\.29\s+100\s+NGN per bag\s+6,500\.00\s+32,500\.00\s+617,500\.00\n\s+Grade 42\.5R, 50 kg bag\n/,
      /2\s+Rebar 12 mm\s+HS 7214\.20\s+25\s+NGN per piece\s+1,000\.00\s+0\.00\s+25,000\.00\n\s+12 mm deformed bar, 12 m\n/,
      /Allowances and charges/,
      /Allowance\s+2,500\.00/,
      /Charge\s+5,000\.00/,
      /Standard Value-Added Tax \(STANDARD_VAT\)\s+7\.5%\s+645,000\.00\s+48,375\.00/,
      /Sum of line amounts\s+642,500\.00/,
      /Total excluding tax\s+645,000\.00/,
      /\n\s+Tax\s+48,375\.00/,
      /Total including tax\s+693,375\.00/,
      /Amount payable \(NGN\)\s+693,375\.00/,
      /Payment means\s+Credit Transfer \(code 30\)/,
      /Payment due\s+2026-12-15/,
      /Payment terms\s+Net 30\. 2% late fee per month after due date\./,
      /Note\s+Delivery to site office, gate 2/,
      "Tax authority QR code (IRN)",
      "Scan with a phone to verify",
      `key id ${SIGNATURE.kid}`,
      SIGNATURE.hash,
      /page 1 of 1\n/,
    ];
    for (const item of expected) {
      if (typeof item === "string") assert.ok(text.includes(item), `missing ${item}`);
      else assert.match(text, item);
    }
  });

  test("a 300-line invoice flows over pages: header and page numbers on each, totals once", async (t) => {
    const dir = tempDir(t);
    const file = await rendered(dir, pdfInput(manyLines(300)));
    const layout = await pages(file);
    const count = layout.length;
    assert.ok(count >= 5, `${count} pages`);
    const lastLine = layout.findLastIndex((page) => page.includes("Batch 299, 50 kg bag"));
    layout.forEach((page, index) => {
      assert.match(page, new RegExp(`page ${index + 1} of ${count}\\n`), `page ${index + 1}`);
      // Pages after the last line hold only what follows the table.
      if (index <= lastLine) assert.match(page, HEADER, `table header on page ${index + 1}`);
    });
    assert.match(
      layout[1] ?? "",
      /Commercial Invoice INV0001\s+·\s+IRN INV0001-AB12CD34-20261115\s+·\s+continued/,
    );

    // Stream order keeps each cell's wrapped lines together: every name and description, whole.
    const raw = squash((await pages(file, "-raw")).join(" "));
    for (let index = 0; index < 300; index++) {
      assert.ok(raw.includes(`${index + 1} ${lineName(index)} Batch ${index}, 50 kg bag`), `line ${index}`);
    }
    const all = layout.join("\f");
    assert.equal(all.match(/Amount payable \(NGN\)/g)?.length, 1);
    assert.equal(all.match(/Total including tax/g)?.length, 1);
    assert.match(layout.at(-1) ?? "", /Amount payable \(NGN\)/);

    // The Yorùbá and Hausa names come back exactly, code point for code point.
    assert.ok(all.includes(`${YORUBA} Trading`), "the buyer's name");
    assert.ok(all.includes(`${HAUSA} 5 ₦`), "a Hausa line");
    const named = Array.from({ length: 300 }, (_, index) => lineName(index));
    assert.equal(all.split(YORUBA).length - 1, 1 + named.filter((name) => name.startsWith(YORUBA)).length);
    assert.equal(all.split(HAUSA).length - 1, named.filter((name) => name.startsWith(HAUSA)).length);
  });

  test("a credit note: its title, a second currency, an ISIC code, a rate-only discount, reasons", async (t) => {
    const document = fullInvoice();
    const [first, second] = document.invoice_line as Json[];
    Object.assign(document, {
      invoice_type_code: "380",
      tax_currency_code: "USD",
      billing_reference: [{ irn: "INV0001-AB12CD34-20261115", issue_date: "2026-11-15" }],
      invoice_line: [
        { ...first, hsn_code: undefined, isic_code: "4100", discount_amount: undefined, discount_rate: 5 },
        second,
      ],
      allowance_charge: [
        { charge_indicator: false, amount: 2500, allowance_charge_reason: "Loyalty discount" },
      ],
      payment_means: [
        { payment_means_code: "10" },
        { payment_means_code: "42" },
        { payment_means_code: "XYZ" },
      ],
    });
    const [text = ""] = await pages(await rendered(tempDir(t), pdfInput(document)));
    assert.match(text, /^Credit Note\n/);
    assert.match(text, /Tax currency\s+USD \(US Dollar, \$\)/);
    assert.match(text, /Billing reference\s+INV0001-AB12CD34-20261115/);
    assert.match(
      text,
      /Portland cement 50 kg\s+ISIC 4100\s+100\s+NGN per bag\s+6,500\.00\s+5%\s+617,500\.00/,
    );
    assert.match(text, /Allowance\s+Loyalty discount\s+2,500\.00/);
    assert.match(text, /Payment means\s+Cash \(code 10\)/);
    assert.match(text, /Payment means\s+ACH Credit \(code 42\)/);
    assert.match(text, /Payment means\s+XYZ\n/);
  });

  test("the same record gives the same bytes", async () => {
    const input = pdfInput(fullInvoice());
    const [first, second] = [await renderInvoicePdf(input), await renderInvoicePdf(input)];
    assert.ok(first.equals(second), "two renderings differ");
  });

  /**
   * Page 1 of the full invoice at 50 dpi against the committed picture of it. A change of layout
   * (a block moved, a font or a size changed) fails here; when the change is meant, regenerate the
   * picture and look at it before committing it:
   *   UPDATE_PDF_REFERENCE=1 npx tsx --test test/documents/pdf/pdf.test.ts
   * The tolerance (pixels more than 10% apart) absorbs anti-aliasing differences between poppler
   * builds; a line of text moved by one row of pixels already differs in thousands of pixels.
   */
  test("page 1 looks as the reference picture", { skip: !COMPARE && "no ImageMagick compare" }, async (t) => {
    const dir = tempDir(t);
    const image = await pageImage(dir, await rendered(dir, pdfInput(fullInvoice())), 50);
    if (process.env.UPDATE_PDF_REFERENCE === "1") {
      fs.copyFileSync(image, REFERENCE);
      t.diagnostic(`reference written: ${REFERENCE}`);
      return;
    }
    const args = ["-metric", "AE", "-fuzz", "10%", REFERENCE, image, path.join(dir, "diff.png")];
    const command = COMPARE === "/usr/bin/magick" ? ["compare", ...args] : args;
    // compare exits 1 when the pictures differ at all, 2 when it could not compare them.
    const result = await run(COMPARE as string, command).catch((err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1, err.stderr);
      return err;
    });
    const differing = Number.parseFloat(result.stderr);
    assert.ok(differing <= 200, `${result.stderr} pixels differ from ${REFERENCE}`);
  });

  test("both QR codes read back from page 1 at 300 dpi; the platform one is at least 30 mm wide", async (t) => {
    const dir = tempDir(t);
    const image = await pageImage(dir, await rendered(dir, pdfInput(fullInvoice())), 300);
    await loadQrDecoder();
    const found = await readBarcodes(fs.readFileSync(image), {
      formats: ["QRCode"],
      maxNumberOfSymbols: 4,
      tryHarder: true,
    });
    const texts = found.filter((r) => r.isValid).map((r) => r.text);
    assert.ok(texts.includes(QR_TEXT), "platform QR");
    assert.ok(texts.includes(VERIFICATION_TEXT), "verification QR");
    assert.equal(found.find((r) => r.text === QR_TEXT)?.ecLevel, "H");
    assert.equal(found.find((r) => r.text === VERIFICATION_TEXT)?.ecLevel, "M");

    assert.ok(PLATFORM_QR_SIZE >= (30 / 25.4) * 72, `${PLATFORM_QR_SIZE} pt`);
    const { topLeft, topRight } = (found.find((r) => r.text === QR_TEXT) as (typeof found)[number]).position;
    const pixels = Math.hypot(topRight.x - topLeft.x, topRight.y - topLeft.y);
    // 30 mm at 300 dpi is 354 pixels.
    assert.ok(pixels >= 354, `${pixels} px`);
  });

  test("the minimal invoice and documents of odd shapes render without throwing", async (t) => {
    const dir = tempDir(t);
    const documents: Record<string, Json> = {
      minimal: minimalInvoice(),
      empty: {},
      noLines: { ...fullInvoice(), invoice_line: [] },
      wrongTypes: wrongTypes(),
      huge: huge(),
    };
    for (const [name, document] of Object.entries(documents)) {
      const pdf = await renderInvoicePdf({
        ...pdfInput(document),
        irn: name === "empty" ? "" : "INV9-AB12CD34-20261116",
      });
      assert.equal(pdf.subarray(0, 5).toString("latin1"), "%PDF-", name);
      const file = path.join(dir, `${name}.pdf`);
      fs.writeFileSync(file, pdf);
      const text = (await pages(file)).join("\f");
      assert.match(text, /page 1 of \d+/, name);
    }
    const minimal = (await pages(path.join(dir, "minimal.pdf"))).join("");
    assert.match(minimal, /Amount payable \(NGN\)\s+13,975\.00/);
    assert.match(minimal, /Portland cement 50 kg\s+HS 2523\.29\s+2\s+NGN per bag\s+6,500\.00\s+13,000\.00/);
  });

  test("odd input around the document: no signature, bad date, QR texts empty or too long", async () => {
    const base = pdfInput(minimalInvoice());
    const odd = [
      { ...base, signature: null },
      { ...base, signedAt: "not a date", qrText: "", verificationText: "" },
      { ...base, qrText: "A".repeat(5_000), verificationText: "x".repeat(5_000) },
      { ...base, irn: 42, status: null, signature: { kid: 7, hash: ["a"] } } as unknown as InvoicePdfInput,
    ];
    for (const input of odd) {
      assert.equal((await renderInvoicePdf(input)).subarray(0, 5).toString("latin1"), "%PDF-");
    }
  });
});

/** Every field of the wrong type, and values no validation would let through. */
function wrongTypes(): Json {
  return {
    irn: 12,
    invoice_type_code: ["381"],
    issue_date: {},
    due_date: null,
    note: 12345,
    payment_terms_note: "  \u0000\u0007  ",
    document_currency_code: { code: "NGN" },
    tax_currency_code: "XYZ",
    billing_reference: "INV0001",
    accounting_supplier_party: 42,
    accounting_customer_party: {
      party_name: ["Lekki"],
      tin: true,
      postal_address: {
        street_name: "\uD800 lone surrogate \u0001 and 😀",
        country: "not a country",
        lga: 5,
      },
    },
    invoice_line: [
      null,
      7,
      "line",
      { item: "cement", price: [], invoiced_quantity: "many", line_extension_amount: Number.NaN },
      { item: { name: { en: "x" } }, price: { price_amount: Number.POSITIVE_INFINITY }, discount_rate: "5" },
      { isic_code: 4100, invoiced_quantity: -3, line_extension_amount: -1e21, discount_amount: 1e300 },
    ],
    allowance_charge: [{ charge_indicator: "maybe", amount: "abc" }, null, { charge_indicator: true }],
    tax_total: { tax_subtotal: [] },
    legal_monetary_total: [1, 2, 3],
    payment_means: [null, 5, { payment_means_code: {} }, { payment_means_code: "ZZZ", payment_due_date: 3 }],
  };
}

/** 10,000-character values everywhere a text goes, with and without spaces. */
function huge(): Json {
  const words = "word ".repeat(2_000);
  const solid = "x".repeat(10_000);
  const document = fullInvoice();
  const lines = document.invoice_line as Json[];
  document.note = words;
  document.payment_terms_note = solid;
  document.order_reference = solid;
  document.accounting_supplier_party = {
    party_name: solid,
    tin: solid,
    postal_address: { street_name: words },
  };
  document.accounting_customer_party = { party_name: words, email: solid };
  document.invoice_line = lines.map((line) => ({
    ...line,
    item: { name: solid, description: words },
    price: { price_amount: 1, price_unit: solid },
    hsn_code: solid,
  }));
  document.allowance_charge = [{ charge_indicator: true, amount: 1, allowance_charge_reason: words }];
  return document;
}
