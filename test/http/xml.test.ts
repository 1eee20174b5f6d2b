import assert from "node:assert/strict";
import { test } from "node:test";
import { prefersXml, referenceXml } from "../../src/http/xml.ts";

test("Accept negotiation prefers XML only when asked", () => {
  assert.equal(prefersXml(undefined), false);
  assert.equal(prefersXml("*/*"), false);
  assert.equal(prefersXml("application/json"), false);
  assert.equal(prefersXml("application/xml"), true);
  assert.equal(prefersXml("text/xml, application/json"), true);
  assert.equal(prefersXml("application/xml;q=0.5, application/json"), false);
  assert.equal(prefersXml("application/json;q=0.2, application/xml;q=0.9"), true);
  assert.equal(
    referenceXml([{ code: "58", value: "Banker's Draft & <Co>" }]),
    '<?xml version="1.0" encoding="UTF-8"?>\n<response><code>200</code><data><item><code>58</code><value>Banker&apos;s Draft &amp; &lt;Co&gt;</value></item></data></response>\n',
  );
});
