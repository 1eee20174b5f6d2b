import { batcher } from "../../batcher.ts";
import type { Principal } from "../../businesses/business-service.ts";
import { canonicalBusinessId } from "../../businesses/ids.ts";
import type { BusinessProfile, BusinessProfiles } from "../../businesses/profiles.ts";
import type { Sealer } from "../../crypto/sealer.ts";
import type { InvoiceTable } from "../../db/schema.ts";
import type { InvoiceDocument } from "../../documents/schema.ts";
import { openDocument } from "../../documents/stored.ts";
import { resultOf } from "../../documents/validation/remote-check.ts";
import type { InvoiceValidator, ValidationResult } from "../../documents/validation/validation.ts";
import { isLargeDocument } from "../../documents/validation/validation.ts";
import { capViolations, DomainError, MAX_VIOLATIONS, summarize, type Violation } from "../../errors.ts";
import type { AnswerWith } from "../../idempotency/with-work.ts";
import { JsonText, jsonTextOf } from "../../json-text.ts";
import type { ProductCodes } from "../../reference/product-codes.ts";
import { type InvoiceRepository, isUniqueViolation } from "../invoice-repository.ts";
import { initialState } from "../lifecycle.ts";
import type { InvoiceTransmits } from "../transmits.ts";
import { invoiceBatches } from "./batch.ts";
import { irnExists, sameDocument } from "./duplicates.ts";
import { type DocumentFacts, documentFacts } from "./facts.ts";
import type { GroupCommit, Registered, Submission } from "./group-commit.ts";
import type { Preparation } from "./preparation.ts";
import type { Preparer } from "./preparation-pool.ts";

const INVALID_INVOICE = "Failed to validate invoice";

/** `fingerprint`: of a text checked on the preparation thread, its Idempotency-Key fingerprint too. */
type Checking = { single?: boolean; signing?: boolean; fingerprint?: boolean };

/**
 * A document that passed its check: for whom, its warnings, what the sign's row takes from it, and
 * the document itself, read when asked for (a body the event loop did not parse is parsed then).
 * `ready` is there when it was prepared for a sign on the preparation thread, and `facts` too when
 * the event loop never parsed it.
 */
type Checked = {
  business: BusinessProfile;
  warnings: Violation[];
  warningsBeyond: number;
  facts: DocumentFacts | undefined;
  document: () => Promise<InvoiceDocument>;
  ready: { prepared: Preparation; signedAt: string } | undefined;
  /** With `fingerprint`, when the preparation thread read the text. */
  fingerprint?: string | undefined;
};

/**
 * The answer of a keyed sign to store with it (group-commit.ts), given the warnings it answers
 * with: undefined for one not to store so.
 */
export type AnswerOf = (warnings: Violation[], warningsBeyond: number) => AnswerWith | undefined;

function validationFailed(violations: Violation[], beyond = 0): DomainError {
  const { shown, total } = capViolations(violations, MAX_VIOLATIONS, beyond);
  return new DomainError("validation_failed", {
    message: INVALID_INVOICE,
    details: summarize(violations, 3, total),
    publicMessage: `The invoice was not accepted: ${total} problem(s) found; see error.violations for each field.`,
    violations: shown,
    violationsTotal: total,
  });
}

/**
 * Registering invoices: validate, sign, sign-transmit and the batches (batch.ts). Each document is checked
 * (validation.ts) and prepared (canonical form, sealing, QR) on the preparation thread, a single one in
 * one trip (`check`), then signed and stored with the other signs of its turn in one transaction (the
 * group commit, group-commit.ts), which also writes the first history entry, the webhook notice and,
 * for sign-transmit, the delivery job.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: check, prepare and the group commit are its closures, each under the limit
export function invoiceRegistration(deps: {
  invoices: Pick<InvoiceRepository, "find">;
  profiles: Pick<BusinessProfiles, "find">;
  sealer: Sealer;
  /** Works out the per-invoice cryptography of a sign. */
  preparer: Pick<Preparer, "prepare" | "check">;
  /** Signs and stores the batches of the group commit. */
  groupCommit: Pick<GroupCommit, "commit">;
  validate: InvoiceValidator;
  products: Pick<ProductCodes, "current">;
  /** sign-transmit waits for the delivery as transmit does. */
  transmits: Pick<InvoiceTransmits, "awaitDelivery">;
  /** A supplier TIN other than the signing business's is refused, not warned of. */
  strictSupplier?: boolean;
  /** Told how many invoices each committed batch signed. */
  onSigned?: (count: number) => void;
}) {
  const { invoices, profiles, sealer, preparer, groupCommit, validate, products, transmits } = deps;

  /** The business a document is submitted for, when it is the caller's, and the rules' context. */
  async function contextOf(principal: Principal, body: unknown) {
    const claimed =
      typeof body === "object" && body !== null ? (body as Record<string, unknown>).business_id : undefined;
    // UUIDs compare case-insensitively (RFC 9562): `1880B96A-…` is the caller's `1880b96a-…`.
    const business =
      typeof claimed === "string" && canonicalBusinessId(claimed) === principal.businessId
        ? await profiles.find(principal.businessId)
        : undefined;
    const knownProducts = await products.current();
    return {
      claimed,
      business,
      ctx: { business, knownProducts, strictSupplier: deps.strictSupplier ?? false },
    };
  }

  /** The checked document typed, with its warnings; throws `validation_failed` for an invalid one. */
  function accepted(
    claimed: unknown,
    business: BusinessProfile | undefined,
    { errors, errorsBeyond, warnings, warningsBeyond, document }: ValidationResult,
  ) {
    if (typeof claimed === "string" && !business) {
      errors.unshift({
        path: "business_id",
        rule: "business_exists",
        message: `business '${claimed}' does not exist or is not the business of these API credentials`,
        actual: claimed,
      });
    }
    if (errors.length > 0 || !business) throw validationFailed(errors, errorsBeyond);
    return { document: document as InvoiceDocument, business, warnings, warningsBeyond };
  }

  /**
   * Validates a submitted document for the caller; returns it typed, with any warnings, and, with
   * `signing`, prepared for the sign. A single document that is not large (`isLargeDocument`, the
   * validation pool's test) is checked on the preparation thread and, when it passes, prepared
   * there in the same trip: the event loop copies it over once and keeps neither the rules' time
   * nor the cryptography's. A body the event loop left unparsed (JsonText) goes over as its text
   * (`checkText`). A batch's documents and large ones are checked as `validate` decides
   * (validation-pool.ts).
   */
  async function check(principal: Principal, body: unknown, how: Checking = {}): Promise<Checked> {
    if (body instanceof JsonText && how.single) return checkText(principal, body, how);
    const parsed = body instanceof JsonText ? await body.value() : body;
    const { claimed, business, ctx } = await contextOf(principal, parsed);
    if (!how.single || isLargeDocument(parsed)) {
      return checkedOf(accepted(claimed, business, await validate(parsed, ctx)), undefined);
    }
    const signedAt = how.signing ? new Date().toISOString() : "";
    const text = jsonTextOf(parsed);
    // Objects spelled out, not spread or rested: on the event loop an object rest is a runtime call
    // that builds its copy key by key, and these run once or more for every sign.
    const answer = await preparer.check({
      body: text === undefined ? parsed : undefined,
      text,
      ctx: { business: ctx.business, strictSupplier: ctx.strictSupplier },
      knownProducts: ctx.knownProducts,
      sign: how.signing && business ? { certificate: business.certificate, signedAt } : undefined,
    });
    // Only a sign stores the checked document: a validate answers with its findings alone.
    const checked = accepted(
      claimed,
      business,
      how.signing ? resultOf(parsed, answer) : { ...answer, document: parsed },
    );
    return checkedOf(checked, answer.prepared && { prepared: answer.prepared, signedAt });
  }

  /**
   * A single document whose body the event loop left unparsed: its text goes to the preparation
   * thread, which parses it once, checks it for the caller's business when it claims it, and, for
   * a sign that passes, prepares it and sends back what the row takes from it (`facts`). The event
   * loop parses it only for what cannot do without (a duplicate's comparison, a text the thread
   * could not read, which is then checked as any body).
   */
  async function checkText(principal: Principal, body: JsonText, how: Checking): Promise<Checked> {
    const business = await profiles.find(principal.businessId);
    const knownProducts = await products.current();
    const signedAt = how.signing ? new Date().toISOString() : "";
    const answer = await preparer.check({
      body: undefined,
      text: body.text,
      ctx: { business, strictSupplier: deps.strictSupplier ?? false },
      knownProducts,
      owner: principal.businessId,
      sign: how.signing && business ? { certificate: business.certificate, signedAt } : undefined,
      fingerprint: how.fingerprint,
    });
    if (answer.unread) return check(principal, await body.value(), how);
    const { claimed } = answer;
    const claims = claimed !== undefined && canonicalBusinessId(claimed) === principal.businessId;
    const owner = claims ? business : undefined;
    // The checked document, parsed only when asked for: a sign needs none but for a duplicate.
    let document: InvoiceDocument | undefined;
    const read = async () => {
      document ??= resultOf(await body.value(), answer).document as InvoiceDocument;
      return document;
    };
    const {
      business: signer,
      warnings,
      warningsBeyond,
    } = accepted(claimed, owner, {
      ...answer,
      document: undefined,
    });
    return {
      business: signer,
      warnings,
      warningsBeyond,
      facts: answer.facts,
      document: read,
      ready: answer.prepared && { prepared: answer.prepared, signedAt },
      fingerprint: answer.fingerprint,
    };
  }

  /** A document parsed on the event loop, checked: its facts are worked out from it if it is signed. */
  function checkedOf(
    { document, business, warnings, warningsBeyond }: ReturnType<typeof accepted>,
    ready: Checked["ready"],
  ): Checked {
    return { business, warnings, warningsBeyond, facts: undefined, document: async () => document, ready };
  }

  /**
   * A sign as it goes to the group commit: its row complete but for the chain link, which is made
   * under the chains' lock (group-commit.ts). Its cryptography (canonical form, sealing, QR code)
   * was worked out on the preparation thread, with its check or now.
   */
  function submission(
    principal: Principal,
    facts: DocumentFacts,
    business: BusinessProfile,
    transmitting: boolean,
    signedAt: string,
    prepared: Preparation,
  ): Submission {
    const { status, payment_status } = initialState(transmitting, facts.payment_status);
    // One literal in the table's column order: every sign's row has the same shape from the start.
    return {
      principal,
      businessId: business.id,
      signedAt,
      canonical: prepared.canonical,
      answer: undefined,
      row: {
        irn: facts.irn,
        business_id: business.id,
        status,
        payment_status,
        payment_reference: null,
        invoice_type_code: facts.invoice_type_code,
        issue_date: facts.issue_date,
        supplier_tin: facts.supplier_tin,
        customer_tin: facts.customer_tin,
        document: prepared.document,
        sealed: prepared.sealed,
        signed_at: signedAt,
        transmitted_at: null,
        authority_reference: null,
        qr_code: prepared.qrCode,
        updated_at: signedAt,
        chain_seq: null,
        previous_hash: null,
        hash: null,
        signature: null,
        kid: null,
        payable_minor: facts.payable_minor,
        paid_minor: facts.paid_minor,
        currency_digits: facts.currency_digits,
      },
    };
  }

  /**
   * Group commit (group-commit.ts): the signs that reach this point in one turn of the event loop
   * are signed and stored in one transaction; each is answered only after that commit.
   */
  const signing = batcher<Submission, Registered>(
    async (batch) => {
      const outcomes = await groupCommit.commit(batch);
      deps.onSigned?.(outcomes.filter((outcome) => outcome.ok).length);
      return outcomes;
    },
    // One batch at a time on both engines: a batch locks the chains of every business it holds, so
    // batches side by side mostly wait on each other's locks (measured on PostgreSQL, 2 processes:
    // 1,143 signs/s one at a time, 731 with four), while one at a time each takes everything that
    // arrived during the last.
    { maxBatch: 64, concurrency: 1 },
  );

  const readDocument = (row: InvoiceTable) => openDocument(row, sealer);

  async function register(principal: Principal, body: unknown, transmitting: boolean, answerOf?: AnswerOf) {
    const checked = await check(principal, body, { single: true, signing: true });
    return commit(principal, checked, transmitting, answerOf);
  }

  /**
   * Signs and stores a checked document; with `answerOf`, the answer that it gives for its
   * Idempotency-Key too (`answered`, when stored so).
   */
  async function commit(principal: Principal, checked: Checked, transmitting: boolean, answerOf?: AnswerOf) {
    const { business, warnings, warningsBeyond, ready } = checked;
    const facts = checked.facts ?? documentFacts(await checked.document());
    try {
      const signedAt = ready?.signedAt ?? new Date().toISOString();
      const prepared =
        ready?.prepared ??
        (await preparer.prepare({
          document: await checked.document(),
          irn: facts.irn,
          certificate: business.certificate,
          signedAt,
        }));
      const sign = submission(principal, facts, business, transmitting, signedAt, prepared);
      sign.answer = answerOf?.(warnings, warningsBeyond);
      const { irn, jobId } = await signing.submit(sign);
      return { irn, jobId, warnings, warningsBeyond, answered: sign.answer?.body };
    } catch (err) {
      // Registered before, or by a concurrent batch of another process (the constraint had the
      // last word).
      if (isUniqueViolation(err) || (err instanceof DomainError && err.code === "irn_exists")) {
        throw await duplicate(principal, await checked.document());
      }
      throw err;
    }
  }

  /** `IRN already exists.`, saying so when the business's stored invoice is this very document. */
  async function duplicate(principal: Principal, document: InvoiceDocument): Promise<DomainError> {
    try {
      const row = await invoices.find(document.irn, principal.businessId);
      const identical = row !== undefined && sameDocument(readDocument(row), document);
      return irnExists(document.irn, identical ? row.signed_at : undefined);
    } catch {
      // The comparison is a courtesy: the IRN is taken whatever it would have found.
      return irnExists(document.irn);
    }
  }

  const batches = invoiceBatches({ check, commit });

  return {
    async validate(principal: Principal, body: unknown) {
      const { warnings, warningsBeyond } = await check(principal, body, { single: true });
      return { warnings, warningsBeyond };
    },

    /**
     * With `answerOf`, the answer to the sign's Idempotency-Key is stored with the invoice, and
     * `answered` is its body, to send as it is.
     */
    async sign(principal: Principal, body: unknown, answerOf?: AnswerOf) {
      const { warnings, warningsBeyond, answered } = await register(principal, body, false, answerOf);
      return { warnings, warningsBeyond, answered };
    },

    /**
     * A sign in two steps, for one whose Idempotency-Key is claimed between them, or with its
     * commit: checked and prepared (throws as `sign` for a document refused), with the body's
     * fingerprint when the preparation thread parsed it (else undefined: the caller works it out)
     * and its warnings; then stored by `commit`, as `sign` stores it.
     */
    async checkSign(principal: Principal, body: unknown) {
      const checked = await check(principal, body, { single: true, signing: true, fingerprint: true });
      return {
        fingerprint: checked.fingerprint,
        /** What the sign will answer with, for its answer to be made before its commit. */
        warnings: checked.warnings,
        warningsBeyond: checked.warningsBeyond,
        async commit(answerOf?: AnswerOf) {
          const { warnings, warningsBeyond, answered } = await commit(principal, checked, false, answerOf);
          return { warnings, warningsBeyond, answered };
        },
      };
    },

    /** Each document of a batch signed on its own, with a result each (batch.ts). */
    signMany: batches.signMany,

    async signAndTransmit(principal: Principal, body: unknown) {
      const { irn, jobId, warnings, warningsBeyond } = await register(principal, body, true);
      await transmits.awaitDelivery(irn, jobId as number);
      return { warnings, warningsBeyond };
    },
  };
}

export type InvoiceRegistration = ReturnType<typeof invoiceRegistration>;
