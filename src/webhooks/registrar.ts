import { randomBytes } from "node:crypto";
import type { AuditLogRepository } from "../audit-log/audit-log-repository.ts";
import { canonicalBusinessId } from "../businesses/ids.ts";
import { type Db, writeTransaction } from "../db/database.ts";
import type { SealingService } from "../keys/sealing.ts";
import type { WebhookRepository } from "./webhook-repository.ts";

/** A webhook registration: the URL and a new signing secret, shown once. */
export function webhookRegistrar(deps: {
  db: Db;
  webhooks: WebhookRepository;
  sealing: Pick<SealingService, "under">;
  businessExists: (id: string) => Promise<boolean>;
  audit: Pick<AuditLogRepository, "append">;
}) {
  return {
    async set(id: string, url: string, actor = "cli") {
      const businessId = canonicalBusinessId(id);
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new Error(`'${url}' is not a URL`);
      }
      if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
        throw new Error("the webhook URL must be http or https");
      if (!(await deps.businessExists(businessId))) throw new Error(`business ${businessId} does not exist`);
      const secret = `whsec_${randomBytes(24).toString("base64url")}`;
      const at = new Date().toISOString();
      await writeTransaction(deps.db, async (tx) => {
        const sealed = (await deps.sealing.under(tx)).seal(secret, businessId);
        await deps.webhooks.upsert(
          { business_id: businessId, url: parsed.toString(), secret: sealed, created_at: at },
          tx,
        );
        await deps.audit.append(
          { at, actor, action: "webhook.set", business_id: businessId, subject: parsed.toString() },
          tx,
        );
      });
      return {
        business_id: businessId,
        url: parsed.toString(),
        secret,
        signature_header: "X-Einvoice-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, t + '.' + body)>",
      };
    },
  };
}
