import assert from "node:assert/strict";
import type { Context } from "../../src/main.ts";
import type { build } from "../helpers.ts";

export const FORM = { "content-type": "application/x-www-form-urlencoded" };

type App = Awaited<ReturnType<typeof build>>["app"];

/** An operator's browser on `app`, signed in: GETs and form POSTs with the session cookie. */
export async function operator(app: App, ctx: Context) {
  const password = ctx.operator.password;
  assert.ok(password, "the sandbox has an operator password");
  const res = await app.inject({
    method: "POST",
    url: "/dashboard/login",
    headers: FORM,
    payload: new URLSearchParams({ password }).toString(),
  });
  assert.equal(res.statusCode, 303, res.body);
  const session = res.cookies.find((c) => c.name === "einvoice_operator");
  assert.ok(session);
  const cookie = `einvoice_operator=${session.value}`;
  return {
    get: (url: string) => app.inject({ url, headers: { cookie } }),
    post: (url: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) =>
      app.inject({
        method: "POST",
        url,
        headers: { ...FORM, cookie, ...headers },
        payload: new URLSearchParams(fields).toString(),
      }),
  };
}
