import assert from "node:assert/strict";
import { test } from "node:test";
import { unpadPkcs1v15 } from "../../src/crypto/qr.ts";

test("PKCS#1 v1.5 unpadding accepts exactly 00 02 PS(≥8 nonzero) 00 M", () => {
  const block = (head: number[], ps: number, message: string) =>
    Buffer.concat([Buffer.from(head), Buffer.alloc(ps, 0x5a), Buffer.from([0]), Buffer.from(message)]);
  assert.equal(unpadPkcs1v15(block([0, 2], 8, "hello"))?.toString(), "hello");
  assert.equal(unpadPkcs1v15(block([0, 2], 200, '{"irn":"x"}'))?.toString(), '{"irn":"x"}');
  assert.equal(unpadPkcs1v15(block([0, 2], 8, ""))?.toString(), "", "an empty message is well formed");
  assert.equal(unpadPkcs1v15(block([0, 2], 7, "hello")), null, "padding shorter than 8 bytes");
  assert.equal(unpadPkcs1v15(block([0, 1], 8, "hello")), null, "block type 1 is for signatures");
  assert.equal(unpadPkcs1v15(block([1, 2], 8, "hello")), null, "the first byte must be 0");
  assert.equal(
    unpadPkcs1v15(Buffer.concat([Buffer.from([0, 2]), Buffer.alloc(30, 7)])),
    null,
    "no separator",
  );
});
