import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { Endpoint, SimContext, SimRequest } from "./endpoint.ts";
import {
  type Answer,
  BODY_TOO_LARGE,
  badCredential,
  errorBody,
  handlerOf,
  invalid,
  MbsError,
  noRoute,
  SERVER_ERRORS,
  tryLater,
} from "./envelopes.ts";
import { createFaultPlanner, type Decision, type FaultPlanner, parseFaults } from "./faults.ts";
import { createInbound, type InboundSummary, MAX_INBOUND } from "./inbound.ts";
import { decideFault, refusalOf } from "./injection.ts";
import type { Query } from "./paging.ts";
import { createRegistry } from "./registry.ts";
import { loadResourceFiles } from "./resource-files.ts";
import { createResources } from "./resources.ts";
import { entityEndpoints } from "./routes-entities.ts";
import { invoiceEndpoints } from "./routes-invoices.ts";
import { injectInbound, simulatorEndpoints } from "./routes-simulator.ts";
import { transmitEndpoints } from "./routes-transmit.ts";
import { vatEndpoints } from "./routes-vat.ts";
import { DEFAULT_RULES, parseRules, type Rules, withRules } from "./rules.ts";
import { loadServiceCodes, SERVICE_CODES_EXTRACT } from "./services-codes.ts";
import { createTaxpayers, credentialsOf, type MbsTaxpayer } from "./taxpayers.ts";

export { FaultSpecError } from "./faults.ts";
export { type InboundSummary, MAX_INBOUND, WRONG_TOTAL_OFFSET } from "./inbound.ts";
export { FAULT_HEADER } from "./injection.ts";
export { ResourceFilesError } from "./resource-files.ts";
export { DEFAULT_RULES, parseRules, RuleSpecError, type Rules } from "./rules.ts";
export type { MbsTaxpayer } from "./taxpayers.ts";
export { taxpayerLogin } from "./taxpayers.ts";

export type MbsSimulator = {
  url: string;
  api_key: string;
  api_secret: string;
  taxpayers: MbsTaxpayer[];
  /** successful registrations (sign calls that registered the IRN) per IRN — a test asserts each is exactly 1 */
  registrations(): Map<string, number>;
  /** sign calls refused because the IRN was registered already (an injected `duplicate` is not one) */
  refusedSigns(): Map<string, number>;
  /**
   * accepted acknowledgements (`PATCH transmit/{IRN}`) per IRN, the first and every repeat — a
   * test asserts how often the receiver's side acknowledged each invoice
   */
  acknowledgements(): Map<string, number>;
  /** the invoices from other APPs' sellers made at start (option `inbound`), in order */
  inbound: InboundSummary[];
  /**
   * Where the reference lists come from, in words: the folder of the authority's lists
   * (`resourcesDir`) or the built-in ones, which are not the authority's (said at start-up).
   */
  referenceLists: string;
  /**
   * Injects invoices from other APPs' sellers, as `POST /_simulator/inbound` does, with the same
   * body: `{count, buyer_tin?, wrong_total?, transmitted_at?}` or `{document, transmitted_at?}`. The
   * IRNs registered; bad input throws, naming what is wrong.
   */
  injectInbound(request: unknown): string[];
  /** how many requests got each fault class so far, e.g. {transient: 12, slow: 3} */
  faultCounts(): Record<string, number>;
  /** the registered invoice's record (state, payment status, transmitted?, acknowledged?, the document) */
  invoice(irn: string): unknown;
  vatReports(): unknown[];
  setFaults(spec: string): void;
  /** The rules in force. */
  rules(): Rules;
  /** Changes some rules (the others keep their value), as an object or as `--rules` text. */
  setRules(changes: Partial<Rules> | string): void;
  close(): Promise<void>;
};

export type MbsSimulatorOptions = {
  port?: number;
  /** A loopback address (127.0.0.1, the default, ::1 or localhost) unless `expose` is set. */
  host?: string;
  /** Listen on a `host` beyond loopback: anyone who can reach it then talks to the simulator. */
  expose?: boolean;
  faults?: string;
  /**
   * Seed of the taxpayers and fault decisions (default 1) and, only when given, of the APP
   * credential: without it the API key and secret are random (two starts differ).
   */
  seed?: number;
  taxpayers?: number;
  /** Switches for what the MBS spec leaves unknown or disputed (rules.ts; defaults in DEFAULT_RULES). */
  rules?: Partial<Rules> | string;
  /** A JSON file of ISIC Rev. 4 classes to serve as `services-codes` (default: a 16-class extract). */
  isicFile?: string;
  /**
   * A folder of the authority's reference lists as its sandbox served them: countries.json,
   * currencies.json, invoice-types.json, vat-exemptions.json and services-codes.json, each the
   * answer's `data` array (resource-files.ts). Served exactly, and documents are checked against
   * them. A file missing or malformed fails the start. Not with `isicFile`.
   */
  resourcesDir?: string;
  /**
   * How many invoices from other APPs' sellers wait in `pull` at start (default 0, at most
   * MAX_INBOUND): spread over the taxpayers as buyers and transmitted over today and the 2 days before.
   */
  inbound?: number;
};

/** Bodies above this are refused (413) before they are read in full. */
export const BODY_LIMIT = 1024 * 1024;
export const MAX_TAXPAYERS = 100;

type Deps = { ctx: SimContext; planner: FaultPlanner; closing: AbortSignal };

const rulesOf = (value: Partial<Rules> | string | undefined): Partial<Rules> =>
  typeof value === "string" ? parseRules(value) : (value ?? {});

const toRequest = (request: FastifyRequest): SimRequest => ({
  params: (request.params ?? {}) as Record<string, string>,
  query: (request.query ?? {}) as Query,
  body: request.body,
  headers: request.headers,
});

async function outcomeOf(endpoint: Endpoint, request: SimRequest): Promise<Answer> {
  try {
    return await endpoint.handle(request);
  } catch (err) {
    if (err instanceof MbsError) return { status: err.status, body: errorBody(err, endpoint.handler) };
    throw err;
  }
}

/** The faults that let the request take effect: its answer replaced, lost or late. */
async function afterEffect(
  deps: Deps,
  decision: Decision | undefined,
  answer: Answer,
  request: FastifyRequest,
  reply: FastifyReply,
  endpoint: Endpoint,
): Promise<FastifyReply> {
  const fault = decision?.fault;
  // Only a sign that registered the IRN can be answered as if an earlier one had [client: the duplicate's words].
  if (fault === "duplicate" && answer.status < 300) {
    deps.planner.count(fault);
    return reply.code(400).send(errorBody(tryLater(), endpoint.handler));
  }
  if (fault === "drop") {
    deps.planner.count(fault);
    // The effect stands and the answer is lost: the ambiguous case a client resolves with confirm.
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }
  if (fault === "slow") {
    deps.planner.count(fault);
    await sleep(deps.planner.slowMs(), undefined, { signal: deps.closing }).catch(() => undefined);
  }
  return reply.code(answer.status).send(answer.body);
}

async function run(deps: Deps, endpoint: Endpoint, request: FastifyRequest, reply: FastifyReply) {
  const sim = toRequest(request);
  if (endpoint.open || endpoint.control) {
    const answer = await outcomeOf(endpoint, sim);
    return reply.code(answer.status).send(answer.body);
  }
  let decision: Decision | undefined;
  try {
    decision = decideFault(deps.planner, endpoint, sim, request.url);
  } catch (err) {
    if (!(err instanceof MbsError)) throw err;
    return reply.code(err.status).send(errorBody(err, endpoint.handler));
  }
  const refusal = decision && refusalOf(decision);
  if (decision && refusal) {
    deps.planner.count(decision.fault);
    return reply.code(refusal.status).send(errorBody(refusal, endpoint.handler));
  }
  return afterEffect(deps, decision, await outcomeOf(endpoint, sim), request, reply, endpoint);
}

function authenticated(request: FastifyRequest, ctx: SimContext): boolean {
  return (
    request.headers["x-api-key"] === ctx.credentials.api_key &&
    request.headers["x-api-secret"] === ctx.credentials.api_secret
  );
}

/** Parsing, downtime, credentials, the 404 and the error envelope: what every route shares. */
function installShared(app: FastifyInstance, deps: Deps, endpoints: ReadonlyMap<string, Endpoint>): void {
  // Any content type is read as JSON (a client that forgets the header is not the point of a test),
  // and an empty body is no body: `transmit` is POSTed without one.
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("*", { parseAs: "string" }, (request, body, done) => {
    if (String(body).trim() === "") done(null, undefined);
    else parseJson(request, String(body), done);
  });
  // Before the body is read: downtime answers everything but the simulator's own routes, a path
  // parameter MBS refuses before the credentials its refusal, a bad credential every closed route.
  app.addHook("onRequest", async (request, reply) => {
    // Fastify answers HEAD with the GET route: it is as open as that route.
    const method = request.method === "HEAD" ? "GET" : request.method;
    const endpoint = endpoints.get(`${method} ${request.routeOptions.url}`);
    // The simulator's own routes are up while MBS is down: a test sets its case up whatever runs.
    if (!endpoint?.control && deps.planner.inDowntime()) {
      deps.planner.count("down");
      return reply.code(503).send(errorBody(new MbsError(503, SERVER_ERRORS[503]), handlerOf(request.url)));
    }
    // [recorded] a path MBS has no route for answers 404 before any credential check.
    if (endpoint?.enabled && !endpoint.enabled(deps.ctx.rules())) {
      const { status, body } = noRoute();
      return reply.code(status).send(body);
    }
    const early = endpoint?.beforeCredentials?.((request.params ?? {}) as Record<string, string>);
    if (endpoint && early) return reply.code(early.status).send(errorBody(early, endpoint.handler));
    if (request.is404 || endpoint?.open || authenticated(request, deps.ctx)) return;
    // [recorded] the credential answer, on every closed route, before the body is read.
    return reply.code(400).send(errorBody(badCredential(), "handler"));
  });
  app.setNotFoundHandler((_request, reply) => {
    const { status, body } = noRoute();
    return reply.code(status).send(body);
  });
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const mapped =
      err.code === "FST_ERR_CTP_BODY_TOO_LARGE"
        ? new MbsError(413, BODY_TOO_LARGE, { details: `the limit is ${BODY_LIMIT} bytes` })
        : (err.statusCode ?? 500) < 500
          ? invalid(
              err instanceof SyntaxError || /JSON/i.test(err.message)
                ? "request body is not valid JSON"
                : err.message,
            )
          : new MbsError(500, SERVER_ERRORS[500]);
    return reply.code(mapped.status).send(errorBody(mapped, handlerOf(request.url)));
  });
}

function buildApp(deps: Deps): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    // A slow answer must not hold close() for its whole delay.
    forceCloseConnections: true,
    routerOptions: { ignoreTrailingSlash: true },
    // Repeated slashes are one: a client that joins `base/` and `/api/…` reports MBS's answers at
    // `//api/…` [client]. The query string is left as it is.
    rewriteUrl: (request) => {
      const url = request.url ?? "/";
      const q = url.indexOf("?");
      const path = q === -1 ? url : url.slice(0, q);
      return path.replace(/\/{2,}/g, "/") + (q === -1 ? "" : url.slice(q));
    },
  });
  const endpoints = [
    ...entityEndpoints(deps.ctx),
    ...invoiceEndpoints(deps.ctx),
    ...transmitEndpoints(deps.ctx),
    ...vatEndpoints(deps.ctx),
    ...simulatorEndpoints(deps.ctx),
  ];
  installShared(app, deps, new Map(endpoints.map((e) => [`${e.method} ${e.url}`, e])));
  for (const endpoint of endpoints) {
    app.route({
      method: endpoint.method,
      url: endpoint.url,
      handler: (request, reply) => run(deps, endpoint, request, reply),
    });
  }
  return app;
}

function urlOf(address: AddressInfo): string {
  const host = ["0.0.0.0", "::"].includes(address.address) ? "127.0.0.1" : address.address;
  return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
}

/** A loopback address: only this machine reaches the simulator there. */
export function isLoopback(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return name === "localhost" || name === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

function checkedOptions(options: MbsSimulatorOptions) {
  const seed = options.seed ?? 1;
  const count = options.taxpayers ?? 4;
  const inbound = options.inbound ?? 0;
  const port = options.port ?? 0;
  const host = options.host ?? "127.0.0.1";
  if (!isLoopback(host) && options.expose !== true) {
    throw new Error(
      `refusing to listen on ${host}: the simulator answers anyone who has its printed credentials and is for this machine (127.0.0.1, ::1 or localhost); pass --expose (the option expose: true) to listen beyond loopback`,
    );
  }
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`invalid seed ${seed}: a whole number ≥ 0`);
  if (!Number.isInteger(count) || count < 1 || count > MAX_TAXPAYERS) {
    throw new Error(`invalid taxpayers ${count}: a whole number from 1 to ${MAX_TAXPAYERS}`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port ${port}`);
  if (!Number.isInteger(inbound) || inbound < 0 || inbound > MAX_INBOUND) {
    throw new Error(`invalid inbound ${inbound}: a whole number from 0 to ${MAX_INBOUND}`);
  }
  const { isicFile, resourcesDir } = options;
  if (isicFile !== undefined && resourcesDir !== undefined) {
    throw new Error(
      "give a folder of the authority's lists (--resources) or a services codes file (--services-codes), not both: the folder holds services-codes.json",
    );
  }
  return {
    seed,
    count,
    inbound,
    port,
    host,
    spec: parseFaults(options.faults),
    rules: withRules(DEFAULT_RULES, rulesOf(options.rules)),
    resources: createResources({
      serviceCodes: isicFile === undefined ? SERVICE_CODES_EXTRACT : loadServiceCodes(isicFile),
      loaded:
        resourcesDir === undefined
          ? undefined
          : { folder: resourcesDir, lists: loadResourceFiles(resourcesDir) },
    }),
  };
}

/** Starts the simulator on a real socket; `port` 0 (the default here) picks a free one. */
export async function startMbsSimulator(options: MbsSimulatorOptions = {}): Promise<MbsSimulator> {
  const { seed, count, inbound, port, host, spec, resources, ...initial } = checkedOptions(options);
  let rules = initial.rules;
  const credentials = credentialsOf(seed, options.seed === undefined ? "random" : "seed");
  const registry = createRegistry(createTaxpayers(seed, count));
  const planner = createFaultPlanner(seed, spec);
  const closing = new AbortController();
  const source = createInbound(seed, registry);
  const seeded = source.seed(inbound).map((irn) => source.summary(irn));
  const ctx: SimContext = {
    seed,
    credentials,
    registry,
    faults: planner,
    rules: () => rules,
    resources: resources.lists,
    codes: resources.codes,
    inbound: source,
  };
  const app = buildApp({ ctx, planner, closing: closing.signal });
  await app.listen({ port, host });
  // Downtime windows count from the moment the simulator answers, not from when its keys were made.
  planner.setSpec(spec);
  return {
    url: urlOf(app.server.address() as AddressInfo),
    api_key: credentials.api_key,
    api_secret: credentials.api_secret,
    taxpayers: registry.taxpayers.map(({ entity_id, business_id, service_id, tin, name, irn_template }) => ({
      entity_id,
      business_id,
      service_id,
      tin,
      name,
      irn_template,
    })),
    registrations: () => registry.registrations(),
    refusedSigns: () => registry.refusedSigns(),
    acknowledgements: () => registry.acknowledgements(),
    inbound: seeded,
    referenceLists: resources.source,
    injectInbound: (request) => injectInbound(ctx, request),
    faultCounts: () => planner.counts(),
    invoice: (irn) => structuredClone(registry.invoice(irn)),
    vatReports: () => structuredClone(registry.vatReports()),
    setFaults: (text) => planner.setSpec(parseFaults(text)),
    rules: () => ({ ...rules }),
    setRules: (changes) => {
      rules = withRules(rules, rulesOf(changes));
    },
    close: async () => {
      closing.abort();
      await app.close();
    },
  };
}
