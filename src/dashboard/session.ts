import { createHmac, timingSafeEqual } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { config, DASHBOARD, type DashboardApp, PAGE, send } from "./page.ts";
import { loginPage } from "./views.ts";

const SESSION_COOKIE = "einvoice_operator";
const SESSION_SECONDS = 12 * 60 * 60;
/** Sign-in attempts per minute per client address, whatever headers it sends. */
const SIGN_IN_ATTEMPTS_PER_MIN = 10;
/** How long a process goes by its copy of the last sign-out before reading it again. */
const SIGN_OUT_READ_MS = 1000;
/** The cookie's value, under its signature: when the session was issued, ms since the epoch. */
const ISSUED = /^issued-(\d{1,15})$/;

/** A path of this dashboard in printable ASCII: nothing that leaves the site or breaks a header. */
const NEXT_PATTERN = "^/dashboard(?:[/?][\\x21-\\x7E]*)?$";
export const NEXT = new RegExp(NEXT_PATTERN);
const Next = Type.String({ pattern: NEXT_PATTERN, maxLength: 2000 });
const LoginQuery = Type.Object({ next: Type.Optional(Next) });
const LoginBody = Type.Object({ password: Type.String({ maxLength: 200 }), next: Type.Optional(Next) });

/**
 * The session cookie is signed with a key derived from the pepper and the operator password:
 * changing the password ends every session (their signatures no longer verify), and any process
 * can check a cookie another one set.
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

/** Where the last sign-out is kept for every process (the table dashboard_sessions). */
export type SignOutStore = {
  /** The last sign-out, ms since the epoch; 0 before the first. */
  lastSignOut(): Promise<number>;
  /** Records a sign-out at `at` unless a later one is recorded. */
  recordSignOut(at: number): Promise<void>;
};

/**
 * Which requests carry a live session. The cookie holds its issue time (signed); a session lives
 * twelve hours unless a sign-out comes first: a sign-out ends every session issued until then, a
 * captured cookie included, in every process. Each process keeps the last sign-out in memory and
 * reads it again at most once a second, for requests that bring a session cookie; its own
 * sign-outs take effect at once, the other processes' within about a second.
 */
export function sessionCheck(operatorPassword: string | undefined, store: SignOutStore) {
  let notBefore = 0;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;

  // No cookies yet when a request fails before the cookie parser has run (a rate limit), and no
  // cookie parser at all while the dashboard is off.
  const cookieOf = (request: FastifyRequest) =>
    operatorPassword ? (request.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE] : undefined;

  const read = async () => {
    // Timed by the monotonic clock: a wall clock set back must not keep a stale copy for hours.
    const started = performance.now();
    notBefore = Math.max(notBefore, await store.lastSignOut());
    readAt = started;
  };

  return {
    /** An onRequest hook: a request with a session cookie checks it against a recent sign-out. */
    async fresh(request: FastifyRequest): Promise<void> {
      if (!cookieOf(request) || performance.now() - readAt < SIGN_OUT_READ_MS) return;
      reading ??= read().finally(() => {
        reading = undefined;
      });
      await reading;
    },

    signedIn(request: FastifyRequest): boolean {
      const raw = cookieOf(request);
      if (!raw) return false;
      const { valid, value } = request.unsignCookie(raw);
      const issued = valid && value !== null ? ISSUED.exec(value)?.[1] : undefined;
      if (issued === undefined) return false;
      return Number(issued) > notBefore && Date.now() < Number(issued) + SESSION_SECONDS * 1000;
    },

    /** A new session's issue time: after the last sign-out known here, even within its millisecond. */
    issuedNow: () => Math.max(Date.now(), notBefore + 1),

    /** Ends every session issued until now: in this process at once, in the others within a second. */
    async endAll(): Promise<void> {
      notBefore = Math.max(notBefore, Date.now());
      await store.recordSignOut(notBefore);
    },
  };
}

export type SessionCheck = ReturnType<typeof sessionCheck>;

export function signInRoutes(
  app: DashboardApp,
  deps: Pick<OperatorSession, "passwordMatches"> & {
    sessions: Pick<SessionCheck, "issuedNow" | "endAll">;
  },
): void {
  const { passwordMatches, sessions } = deps;

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
      reply.setCookie(SESSION_COOKIE, `issued-${sessions.issuedNow()}`, {
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

  // Signing out ends every session, not only this browser's: a copy of the cookie taken earlier
  // (or another browser's) is refused from then on.
  app.post(`${DASHBOARD}/logout`, { schema: PAGE, config: config("logout") }, async (request, reply) => {
    await sessions.endAll();
    request.log.info("dashboard sign-out: every session issued until now has ended");
    return reply.clearCookie(SESSION_COOKIE, { path: DASHBOARD }).redirect(`${DASHBOARD}/login`, 303);
  });
}
