import type { BusinessRepository } from "../businesses/business-repository.ts";
import type { Config } from "../config.ts";
import type { Sealer } from "../crypto/sealer.ts";
import type { Db } from "../db/database.ts";
import type { Validate } from "../documents/validation/validation-pool.ts";
import { inboxCollector } from "../inbox/collector.ts";
import { inboxRepository } from "../inbox/inbox-repository.ts";
import { inboxService } from "../inbox/inbox-service.ts";
import { type DayOutcome, pullHandler } from "../inbox/pull-job.ts";
import type { InvoiceRepository } from "../invoices/invoice-repository.ts";
import { invoiceLifecycle } from "../invoices/lifecycle.ts";
import type { OutboxMetrics } from "../outbox/metrics.ts";
import { outboxRepository } from "../outbox/outbox-repository.ts";
import { outboxQueue, outboxService } from "../outbox/outbox-service.ts";
import { outboxWrite } from "../outbox/write.ts";
import { acknowledgementHandler } from "../transmission/acknowledgement.ts";
import { builtinAuthority } from "../transmission/authority/builtin.ts";
import type { AuthorityConnector } from "../transmission/authority/connector.ts";
import { credentialProbe, probedAuthority } from "../transmission/authority/credential-probe.ts";
import { httpAuthority } from "../transmission/authority/http.ts";
import { mbsAuthority } from "../transmission/authority/mbs.ts";
import { authorityHold, authorityHoldRepository } from "../transmission/authority-hold.ts";
import { deliveryHandler } from "../transmission/delivery.ts";
import { authorityForwarder, forwardHandler } from "../transmission/forward.ts";
import { webhookDispatcher } from "../webhooks/dispatcher.ts";
import { webhookNotifier } from "../webhooks/notifier.ts";
import type { WebhookRepository } from "../webhooks/webhook-repository.ts";

/*
 * The composition root's outbox side (context.ts wires the rest): the configured authority's
 * connector, and the outbox with the jobs it runs, the lifecycle they report to and the inbox they
 * fill.
 */

/** The connector of the configured authority. */
function connectorOf(config: Config): AuthorityConnector {
  const authority = config.authority;
  if (authority.kind === "http") return httpAuthority(authority);
  if (authority.kind === "mbs") return mbsAuthority(authority);
  return builtinAuthority();
}

/**
 * The connector, with its answers that read as a refused credential judged by its content-free
 * probe (credential-probe.ts), and the probe, for the authority hold. The builtin authority has no
 * credential, and no probe.
 */
function authorityOf(config: Config) {
  const connector = connectorOf(config);
  if (!connector.probe) return { authority: connector, probe: undefined };
  const probe = credentialProbe({ probe: connector.probe, timeoutMs: config.outbox.deliveryTimeoutMs });
  return { authority: probedAuthority(connector, probe), probe };
}

/**
 * The outbox with its three kinds of job (an invoice's delivery to the authority, a later message
 * to it, a webhook's event), the sides that queue them, and the lifecycle the deliveries and
 * forwards report their outcomes to.
 */
export function outboxOf(
  config: Config,
  deps: {
    db: Db;
    invoices: InvoiceRepository;
    webhooks: WebhookRepository;
    sealer: Sealer;
    metrics: OutboxMetrics;
    businesses: Pick<BusinessRepository, "list">;
    validate: Validate;
  },
) {
  const { db, invoices: invoicesRepo, webhooks: webhooksRepo, sealer, metrics } = deps;
  const outbox = outboxRepository(db);
  const queue = outboxQueue(outbox);
  const notifier = webhookNotifier({ outbox: queue, webhooks: webhooksRepo });
  const { authority, probe } = authorityOf(config);
  const write = outboxWrite(db);
  const inboxRepo = inboxRepository(db);
  const inbox = inboxService({
    db,
    inbox: inboxRepo,
    businesses: deps.businesses,
    sealer,
    notifier,
    outbox: queue,
    validate: deps.validate,
  });
  const forwarder = authorityForwarder({
    outbox,
    authority,
    maxQueued: config.bounds.queuedForwardsPerBusiness,
  });
  const lifecycle = invoiceLifecycle({
    invoices: invoicesRepo,
    notifier,
    sealer,
    forwarder,
    deliveries: queue,
    // The builtin authority is this service: what one business delivers to another arrives directly.
    ...(authority.name === "builtin" ? { localReceiver: inbox } : {}),
  });
  // The days pulled in this process, for `invoices pull --wait` to print (the collector reads them).
  const observed = new Map<number, DayOutcome>();
  const hold = authorityHold({
    holds: authorityHoldRepository(db),
    authority: authority.name,
    probeMs: config.authorityProbeMs,
    probe,
    write,
  });
  const transmission = outboxService({
    outbox,
    write,
    hold,
    handlers: {
      delivery: deliveryHandler({ invoices: lifecycle.delivery, authority, hold }),
      forward: forwardHandler({ outbox, invoices: lifecycle.forwarding, authority, hold }),
      webhook: webhookDispatcher({ webhooks: webhooksRepo, sealer }),
      acknowledgement: acknowledgementHandler({ receipts: authority.receipts, inbox, hold }),
      pull: pullHandler({
        receipts: authority.receipts,
        service: inbox,
        inbox: inboxRepo,
        hold,
        observe: (jobId, outcome) => {
          observed.set(jobId, outcome);
          // Only the process that runs `invoices pull --wait` reads them: a worker keeps the last few.
          const oldest = observed.keys().next().value;
          if (observed.size > 64 && oldest !== undefined) observed.delete(oldest);
        },
      }),
    },
    settings: config.outbox,
    single: ["pull"],
    onSettled: (job, outcome) => metrics.settled(job.kind, outcome),
  });
  metrics.observe(transmission);
  const collector = inboxCollector({
    db,
    inbox: inboxRepo,
    jobs: transmission,
    receipts: authority.receipts,
    source: "mbs",
    pullMs: config.inbox.pullMs,
    lookbackDays: config.inbox.lookbackDays,
    observed,
  });
  return { notifier, lifecycle, transmission, forwarder, inbox, collector };
}
