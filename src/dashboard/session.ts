import { createHmac, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { config, DASHBOARD, type DashboardApp, PAGE, send } from "./page.ts";
import { loginPage } from "./views.ts";

const SESSION_COOKIE = "einvoice_operator";
const SESSION_SECONDS = 12 * 60 * 60;
/** Sign-in attempts per minute per client address, whatever headers it sends. */
const SIGN_IN_ATTEMPTS_PER_MIN = 10;

/** A path of this dashboard in printable ASCII: nothing that leaves the site or breaks a header. */
const NEXT_PATTERN = "^/dashboard(?:[/?][\\x21-\\x7E]*)?$";
export const NEXT = new RegExp(NEXT_PATTERN);
const Next = Type.String({ pattern: NEXT_PATTERN, maxLength: 2000 });
const LoginQuery = Type.Object({ next: Type.Optional(Next) });
const LoginBody = Type.Object({ password: Type.String({ maxLength: 200 }), next: Type.Optional(Next) });

/**
 * The session cookie is signed with a key derived from the pepper and the operator password:
 * changing the password ends every session, and any process can check a cookie another one set.
 */
export function operatorSession(deps: { operatorPassword: string; pepper: Buffer }) {
  const { operatorPassword, pepper } = deps;
  const digest = (text: string) => createHmac("sha256", pepper).update(text, "utf8").digest();
  const expected = digest(operatorPassword);
  return {
    cookieSecret: digest(`dashboard session\0${operatorPassword}`).toString("hex"),
    passwordMatches: (given: string) => timingSafeEqual(digest(given), expected),
  };
}

export type OperatorSession = ReturnType<typeof operatorSession>;

export function sessionCheck(operatorPassword: string | undefined) {
  return (request: FastifyRequest) => {
    // No cookies yet when a request fails before the cookie parser has run (a rate limit), and no
    // cookie parser at all while the dashboard is off.
    const raw = operatorPassword
      ? (request.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE]
      : undefined;
    if (!raw) return false;
    const { valid, value } = request.unsignCookie(raw);
    return valid && Number(value) > Date.now();
  };
}

export function signInRoutes(app: DashboardApp, deps: Pick<OperatorSession, "passwordMatches">): void {
  const { passwordMatches } = deps;

  app.get(
    `${DASHBOARD}/login`,
    { schema: { ...PAGE, querystring: LoginQuery }, config: config("login") },
    async (request, reply) => send(reply, loginPage(request.query.next ?? DASHBOARD)),
  );

  app.post(
    `${DASHBOARD}/login`,
    {
      schema: { ...PAGE, body: LoginBody },
      config: {
        ...config("login"),
        // Counted by address, whatever else a guesser varies, on top of the public limit.
        addressLimit: { name: "sign-in", perMin: SIGN_IN_ATTEMPTS_PER_MIN, what: "sign-in attempts" },
      },
    },
    async (request, reply) => {
      const next = request.body.next ?? DASHBOARD;
      if (!passwordMatches(request.body.password)) {
        request.log.warn("dashboard sign-in refused: wrong operator password");
        return send(reply, loginPage(next, "That is not the operator password."), 401);
      }
      const expires = Date.now() + SESSION_SECONDS * 1000;
      reply.setCookie(SESSION_COOKIE, String(expires), {
        signed: true,
        httpOnly: true,
        sameSite: "strict",
        secure: request.protocol === "https",
        path: DASHBOARD,
        maxAge: SESSION_SECONDS,
      });
      return reply.redirect(next, 303);
    },
  );

  app.post(`${DASHBOARD}/logout`, { schema: PAGE, config: config("logout") }, async (_request, reply) =>
    reply.clearCookie(SESSION_COOKIE, { path: DASHBOARD }).redirect(`${DASHBOARD}/login`, 303),
  );
}
