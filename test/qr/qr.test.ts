import assert from "node:assert/strict";
import { constants, publicEncrypt } from "node:crypto";
import { test } from "node:test";
import QRCode from "qrcode";
import { readQrImage } from "../../src/qr/qr-image-decoder.ts";
import { parseImageDataUrl } from "../../src/qr/qr-image-guard.ts";
import { build, fixture, type Json, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

/** What an integrator does with the exported crypto keys. */
function clientQr(publicKeyBase64: string, certificate: string, irn: string): string {
  const pem = Buffer.from(publicKeyBase64, "base64").toString("utf8");
  const payload = JSON.stringify({ irn: `${irn}.${Math.floor(Date.now() / 1000)}`, certificate });
  return publicEncrypt({ key: pem, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(payload)).toString(
    "base64",
  );
}

test("a QR code built by a client from the exported crypto keys validates; an unregistered IRN does not", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-full", a);
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice });
  const business = await ctx.businesses.find(a.business_id);
  assert.ok(business);
  const publicKey = Buffer.from(ctx.qr.publicKeyPem).toString("base64");
  const validate = (code: string) =>
    app.inject({ method: "POST", url: `${API}/qr-code/validate`, headers: a.headers, payload: { code } });

  const ok = await validate(clientQr(publicKey, business.certificate, String(invoice.irn)));
  assert.equal(ok.statusCode, 200, ok.body);
  const body = ok.json();
  assert.equal(body.status, true);
  assert.equal(body.message, "QR Code validated successfully");
  assert.equal(body.data.irn, invoice.irn);
  assert.equal(body.data.business_id, a.business_id);

  const cases: [string, RegExp][] = [
    [clientQr(publicKey, business.certificate, `INV0404-${a.service_id}-20261115`), /not registered/],
    [clientQr(publicKey, "not-a-certificate", String(invoice.irn)), /certificate/],
    ["bm90IGVuY3J5cHRlZA==", /could not be decrypted/],
    ["not base64 !", /base64/],
    ["data:image/png;base64,iVBORw0KGgo=", /PNG/],
  ];
  for (const [code, reason] of cases) {
    const res = await validate(code);
    assert.equal(res.statusCode, 400, code);
    const err = res.json() as Json & { error: Json };
    assert.equal(err.status, false);
    assert.equal(err.message, "QR Code validation failed");
    assert.match(String(err.error.details), reason);
  }
});

test("the full record's qr_code validates, as text and as a PNG data URL", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-minimal", a);
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice });
  const record = (await app.inject({ url: `${API}/${String(invoice.irn)}`, headers: a.headers })).json().data;
  assert.match(record.qr_code, /^[A-Za-z0-9+/]+=*$/);

  const b = await tenant(ctx);
  for (const code of [
    record.qr_code as string,
    await QRCode.toDataURL(record.qr_code, { errorCorrectionLevel: "H", width: 300 }),
  ]) {
    // Another business (a buyer) may check the seller's code.
    const res = await app.inject({
      method: "POST",
      url: `${API}/qr-code/validate`,
      headers: b.headers,
      payload: { code },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.irn, invoice.irn);
    assert.equal(res.json().data.business_id, a.business_id);
  }
});

test("qr-code/create makes a PNG data URL that validates; qr.png and qr.svg render the stored code", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-minimal", a);
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice });
  const business = await ctx.businesses.find(a.business_id);
  assert.ok(business);
  const created = await app.inject({
    method: "POST",
    url: `${API}/qr-code/create`,
    headers: a.headers,
    payload: {
      public_key: Buffer.from(ctx.qr.publicKeyPem).toString("base64"),
      certificate: business.certificate,
      irn: invoice.irn,
    },
  });
  assert.equal(created.statusCode, 200, created.body);
  const body = created.json();
  assert.equal(body.message, "QR Code generated successfully");
  assert.match(body.data.qr_code, /^data:image\/png;base64,/);
  const validated = await app.inject({
    method: "POST",
    url: `${API}/qr-code/validate`,
    headers: a.headers,
    payload: { code: body.data.qr_code },
  });
  assert.equal(validated.statusCode, 200, validated.body);

  const bad = await app.inject({
    method: "POST",
    url: `${API}/qr-code/create`,
    headers: a.headers,
    payload: { public_key: "bm90IGEga2V5", certificate: business.certificate, irn: invoice.irn },
  });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.json().error.details, /public_key/);

  const png = await app.inject({ url: `${API}/${String(invoice.irn)}/qr.png`, headers: a.headers });
  assert.equal(png.statusCode, 200);
  assert.equal(png.headers["content-type"], "image/png");
  const dataUrl = `data:image/png;base64,${png.rawPayload.toString("base64")}`;
  const image = parseImageDataUrl(dataUrl);
  assert.ok(image && image.width >= 300, `width ${image?.width}`);
  const record = (await app.inject({ url: `${API}/${String(invoice.irn)}`, headers: a.headers })).json().data;
  assert.equal(await readQrImage(dataUrl), record.qr_code);

  const svg = await app.inject({ url: `${API}/${String(invoice.irn)}/qr.svg`, headers: a.headers });
  assert.equal(svg.statusCode, 200);
  assert.match(String(svg.headers["content-type"]), /image\/svg\+xml/);
  assert.match(svg.body, /^<svg/);

  const b = await tenant(ctx);
  const foreign = await app.inject({ url: `${API}/${String(invoice.irn)}/qr.png`, headers: b.headers });
  assert.equal(foreign.statusCode, 404, "another business cannot render it");
});
