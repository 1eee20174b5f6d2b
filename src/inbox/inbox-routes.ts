import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { actorOf } from "../businesses/business-service.ts";
import { action } from "../http/envelope.ts";
import { Action, responses } from "../http/openapi.ts";
import {
  InboxIrnParams,
  InboxPage,
  InboxQuery,
  ReceivedRecord,
  ReceivedSummary,
  RejectBody,
} from "./inbox-route-schemas.ts";
import type { InboxService } from "./inbox-service.ts";

const PREFIX = "/api/v1/einvoice/inbox";
const BY_IRN = [400, 401, 404, 429, 503];

/**
 * The buyer's inbox (this service's extension of API v1, in its envelopes): the invoices suppliers
 * sent to the calling business, one of them with its checks and history, and the buyer's
 * acknowledgement or rejection. A business sees and decides only its own: another's IRN is not found.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: four routes, each its schema and one call
export function inboxRoutes(deps: {
  inbox: Pick<InboxService, "list" | "read" | "acknowledge" | "reject">;
}): FastifyPluginAsyncTypebox {
  const { inbox } = deps;
  return async (app) => {
    app.get(
      PREFIX,
      {
        schema: {
          summary: "The invoices suppliers sent to this business, newest first",
          tags: ["inbox"],
          querystring: InboxQuery,
          response: responses(Action(InboxPage, "Inbox fetched successfully"), "a page of the inbox"),
        },
        config: { handler: "inbox.list", failureMessage: "Failed to fetch inbox" },
      },
      async (request) => {
        const { supplier_tin, from, to, status, start = 0, length = 50 } = request.query;
        const filter = {
          ...(supplier_tin === undefined ? {} : { supplierTin: supplier_tin }),
          ...(from === undefined ? {} : { from }),
          ...(to === undefined ? {} : { to }),
          ...(status === undefined ? {} : { status }),
        };
        return action(
          "Inbox fetched successfully",
          await inbox.list(request.principal, filter, start, length),
        );
      },
    );

    app.get(
      `${PREFIX}/:irn`,
      {
        schema: {
          summary: "A received invoice: the document as received, what the checks found, its history",
          tags: ["inbox"],
          params: InboxIrnParams,
          response: responses(
            Action(ReceivedRecord, "Invoice fetched successfully"),
            "the received invoice",
            BY_IRN,
          ),
        },
        config: { handler: "inbox.fetch", failureMessage: "Failed to fetch invoice" },
      },
      async (request) =>
        action("Invoice fetched successfully", await inbox.read(request.principal, request.params.irn)),
    );

    app.post(
      `${PREFIX}/:irn/acknowledge`,
      {
        schema: {
          summary:
            "Acknowledge a received invoice: recorded, and told to the authority when it came from there (through the outbox)",
          tags: ["inbox"],
          params: InboxIrnParams,
          response: responses(
            Action(ReceivedSummary, "Invoice acknowledged successfully"),
            "acknowledged (a repeat answers the same)",
            [...BY_IRN, 409],
          ),
        },
        config: { handler: "inbox.acknowledge", failureMessage: "Failed to acknowledge invoice" },
      },
      async (request) =>
        action(
          "Invoice acknowledged successfully",
          await inbox.acknowledge(request.principal, request.params.irn, actorOf(request.principal)),
        ),
    );

    app.post(
      `${PREFIX}/:irn/reject`,
      {
        schema: {
          summary:
            "Reject a received invoice, with the reason: recorded here (the authority documents no rejection)",
          tags: ["inbox"],
          params: InboxIrnParams,
          body: RejectBody,
          response: responses(
            Action(ReceivedSummary, "Invoice rejected successfully"),
            "rejected (a repeat answers the same)",
            [...BY_IRN, 409],
          ),
        },
        config: { handler: "inbox.reject", failureMessage: "Failed to reject invoice" },
      },
      async (request) =>
        action(
          "Invoice rejected successfully",
          await inbox.reject(
            request.principal,
            request.params.irn,
            request.body.reason,
            actorOf(request.principal),
          ),
        ),
    );
  };
}
