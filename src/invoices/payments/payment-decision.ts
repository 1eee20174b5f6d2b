import { currencyDigits, formatMinor, minorUnits, toMajor } from "../../documents/money.ts";
import { DomainError, type Violation } from "../../errors.ts";
import type { PaymentStatus } from "../../reference/data.ts";

/**
 * The payment state of an invoice, in one place: which moves are allowed, what each records, and
 * how a history replays. Amounts are counted in the currency's minor units (kobo for NGN), as
 * integers, so a balance is exact whatever floating point the client computed with.
 */

/** What an invoice row holds of its payment state. */
export type Balance = {
  /** `legal_monetary_total.payable_amount`, in minor units. */
  payable_minor: number;
  /** Paid so far, in minor units; never more than `payable_minor`. */
  paid_minor: number;
  /** The minor-unit digits of the document currency (NGN 2, JPY 0, KWD 3) the two are counted in. */
  currency_digits: number;
};

/** What `update/{IRN}` asks for. */
export type PaymentChange = {
  payment_status: PaymentStatus;
  reference?: string | undefined;
  amount?: number | undefined;
  payment_update_date?: string | undefined;
};

/** The moves out of each status; the current status again is a no-op (PARTIAL: another payment). */
const MOVES: Record<PaymentStatus, readonly PaymentStatus[]> = {
  PENDING: ["PARTIAL", "PAID", "REJECTED"],
  PARTIAL: ["PARTIAL", "PAID"],
  PAID: [],
  REJECTED: [],
};

export function canMove(from: string, to: string): boolean {
  return (MOVES[from as PaymentStatus] as readonly string[] | undefined)?.includes(to) ?? false;
}

/** A payment amount taken by the invoice: the two statuses that record money. */
const TAKES_AMOUNT: readonly string[] = ["PARTIAL", "PAID"];

/** The balance an invoice is signed with: nothing paid, unless the document says PAID. */
export function openingBalance(document: {
  document_currency_code?: unknown;
  legal_monetary_total?: { payable_amount?: unknown } | undefined;
  payment_status?: unknown;
}): Balance {
  const digits = currencyDigits(document.document_currency_code);
  const payable = document.legal_monetary_total?.payable_amount;
  // Validation has held the payable amount to the currency's digits.
  const payableMinor = typeof payable === "number" ? Math.round(payable * 10 ** digits) : 0;
  // A document signed PARTIAL carries no paid amount: its payments come through update/{IRN}.
  return {
    payable_minor: payableMinor,
    paid_minor: document.payment_status === "PAID" ? payableMinor : 0,
    currency_digits: digits,
  };
}

/** What the lookup, the full record and the webhooks say of the balance. */
export function amountsOf(balance: Balance) {
  return {
    amount_paid: toMajor(balance.paid_minor, balance.currency_digits),
    amount_outstanding: toMajor(balance.payable_minor - balance.paid_minor, balance.currency_digits),
  };
}

/**
 * What an update may repeat: a PARTIAL with a reference (not empty) and an amount in whole minor
 * units is a retry when a payment with both is recorded on the invoice. Undefined for any other
 * update, which is never taken for a retry.
 */
export function replayKey(
  change: PaymentChange,
  digits: number,
): { reference: string; amount_minor: number } | undefined {
  const reference = change.reference ?? "";
  if (change.payment_status !== "PARTIAL" || reference === "" || change.amount === undefined)
    return undefined;
  const amount = minorUnits(change.amount, digits);
  return amount === undefined ? undefined : { reference, amount_minor: amount };
}

/** What the invoice's recorded payments say of an update (found by index, not by reading them all). */
export type RecordedPayments = {
  /** A payment with the update's `replayKey` is recorded: the update is a retry. */
  replay: boolean;
  /** How many payments are recorded: while the invoice is open, all of them PARTIALs. */
  count: number;
};

/** The invoice as a payment update sees it. */
export type PayableInvoice = Balance & {
  irn: string;
  payment_status: string;
  payment_reference: string | null;
  issue_date: string;
  /** For messages: the document currency's code. */
  currency: string;
};

export type PaymentDecision =
  /** Nothing to record: the current status again, or a PARTIAL already recorded (a retry). */
  | { kind: "unchanged"; replay: boolean }
  | {
      kind: "move";
      to: PaymentStatus;
      paid_minor: number;
      payment_reference: string | null;
      /** The history entry: what changed, the payment and the balance after it. */
      detail: Record<string, unknown>;
    };

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The 400 that says why an update is refused; its violation's message is `details` unless it has one. */
const refusal = (details: string, violation: Omit<Violation, "message"> & { message?: string }) =>
  new DomainError("payment_transition_refused", {
    message: "Failed to update invoice",
    details,
    violations: [{ ...violation, message: violation.message ?? details }],
  });

const money = (minor: number, invoice: PayableInvoice) =>
  `${formatMinor(minor, invoice.currency_digits)} ${invoice.currency}`;

/** An amount comes with the statuses that record a payment, and PARTIAL cannot do without one. */
function checkAmountGiven(change: PaymentChange): void {
  const to = change.payment_status;
  if (change.amount !== undefined && !TAKES_AMOUNT.includes(to)) {
    throw refusal(`amount is only for PARTIAL and PAID: a ${to} update records no payment`, {
      path: "amount",
      rule: "amount_not_allowed",
      actual: change.amount,
    });
  }
  if (to === "PARTIAL" && change.amount === undefined) {
    throw refusal("amount is required for PARTIAL: the amount of this payment, in the invoice's currency", {
      path: "amount",
      rule: "required",
      message: "is required for PARTIAL",
    });
  }
}

/** The day of the payment: as given, or today; not before the invoice's issue nor after tomorrow. */
function paymentDate(invoice: PayableInvoice, change: PaymentChange, now: number): string {
  const today = dayOf(now);
  const date = change.payment_update_date ?? today;
  if (date < invoice.issue_date) {
    throw refusal(`payment_update_date ${date} is before the invoice's issue_date ${invoice.issue_date}`, {
      path: "payment_update_date",
      rule: "date_order",
      expected: `on or after ${invoice.issue_date}`,
      actual: date,
      related: ["issue_date"],
    });
  }
  // A day of grace for clocks, and for clients east of UTC whose today has already begun.
  const latest = dayOf(now + DAY_MS);
  if (date > latest) {
    throw refusal(`payment_update_date ${date} is in the future: it must be ${latest} or earlier`, {
      path: "payment_update_date",
      rule: "date_not_future",
      expected: `on or before ${latest}`,
      actual: date,
    });
  }
  return date;
}

/** The amount of the update in minor units; undefined when it gives none. */
function paymentMinor(invoice: PayableInvoice, change: PaymentChange): number | undefined {
  if (change.amount === undefined) return undefined;
  const digits = invoice.currency_digits;
  const amount = minorUnits(change.amount, digits);
  if (amount === undefined) {
    throw refusal(
      `amount ${change.amount} is not a whole number of ${invoice.currency} minor units: ${invoice.currency} amounts carry at most ${digits} decimals`,
      { path: "amount", rule: "precision", expected: `at most ${digits} decimals`, actual: change.amount },
    );
  }
  // Float noise around zero (1e-9) is not a payment: it would record nothing and still be told.
  if (amount === 0) {
    throw refusal(
      `amount ${change.amount} is less than one ${invoice.currency} minor unit: a payment is at least ${formatMinor(1, digits)} ${invoice.currency}`,
      {
        path: "amount",
        rule: "precision",
        expected: `at least ${toMajor(1, digits)}`,
        actual: change.amount,
      },
    );
  }
  return amount;
}

/** One invoice takes at most `limit` PARTIAL payments: each is a message to the authority. */
export function checkPartialBound(invoice: PayableInvoice, recorded: number, limit: number): void {
  if (recorded < limit) return;
  const outstanding = invoice.payable_minor - invoice.paid_minor;
  throw refusal(
    `the invoice has ${recorded} PARTIAL payments recorded, the most one invoice may have: send PAID to settle the outstanding balance ${money(outstanding, invoice)}`,
    {
      path: "payment_status",
      rule: "partial_payments_limit",
      message: `at most ${limit} PARTIAL payments per invoice`,
      expected: `at most ${limit} PARTIAL payments`,
      actual: recorded + 1,
    },
  );
}

/** Why the invoice's status cannot change to `to`: PARTIAL has money paid, the others are final. */
function refusedMove(invoice: PayableInvoice, to: PaymentStatus): DomainError {
  const from = invoice.payment_status;
  if (from === "PARTIAL") {
    const paid = money(invoice.paid_minor, invoice);
    return refusal(
      to === "REJECTED"
        ? `payment_status is PARTIAL: ${paid} of the invoice has been paid, so it cannot be REJECTED; settle a rejection after a part payment with a credit note (invoice_type_code 380) whose billing_reference names this invoice`
        : `payment_status is PARTIAL: ${paid} of the invoice has been paid, so it cannot go back to PENDING`,
      {
        path: "payment_status",
        rule: "payment_transition",
        message: "PARTIAL may only change to PARTIAL (another payment) or PAID",
        expected: "PARTIAL or PAID",
        actual: to,
      },
    );
  }
  return refusal(`payment_status is ${from}, which is final: it cannot change to ${to}`, {
    path: "payment_status",
    rule: "payment_transition",
    message: `${from} is final; only PENDING and PARTIAL may change`,
    expected: from,
    actual: to,
  });
}

/** A payment of `amount` minor units is countable, fits the balance, and settles it for PAID. */
function checkPaymentFits(
  invoice: PayableInvoice,
  change: PaymentChange,
  amount: number,
  outstanding: number,
): void {
  const digits = invoice.currency_digits;
  // Past 2^53 minor units (about 90 trillion NGN) integers are no longer exact in JavaScript.
  if (!Number.isSafeInteger(invoice.payable_minor) || !Number.isSafeInteger(amount)) {
    throw refusal(
      `amounts beyond ${formatMinor(Number.MAX_SAFE_INTEGER, digits)} ${invoice.currency} cannot be counted exactly: send PAID without an amount to settle this invoice`,
      { path: "amount", rule: "amount_too_large", actual: change.amount },
    );
  }
  if (amount > outstanding) {
    throw refusal(
      `the payment of ${money(amount, invoice)} exceeds the outstanding balance ${money(outstanding, invoice)} by ${money(amount - outstanding, invoice)}`,
      {
        path: "amount",
        rule: "overpayment",
        message: `exceeds the outstanding balance ${money(outstanding, invoice)} by ${money(amount - outstanding, invoice)}`,
        expected: `at most ${toMajor(outstanding, digits)}`,
        actual: change.amount,
      },
    );
  }
  if (change.payment_status === "PAID" && amount < outstanding) {
    throw refusal(
      `PAID settles the outstanding balance ${money(outstanding, invoice)}: the payment of ${money(amount, invoice)} leaves ${money(outstanding - amount, invoice)} unpaid; send it as PARTIAL, or send PAID without an amount`,
      {
        path: "amount",
        rule: "paid_settles_balance",
        message: `must equal the outstanding balance ${money(outstanding, invoice)} for PAID (or be left out)`,
        expected: toMajor(outstanding, digits),
        actual: change.amount,
        related: ["payment_status"],
      },
    );
  }
}

/** The move an allowed update makes: the status it ends in, the payment it records, the balance after. */
function move(
  invoice: PayableInvoice,
  change: PaymentChange,
  amount: number | undefined,
  outstanding: number,
  date: string,
): PaymentDecision {
  const from = invoice.payment_status;
  const to = change.payment_status;
  const reference = change.reference ?? null;
  let next = to;
  let payment: number | undefined;
  if (to === "PAID") payment = outstanding;
  else if (to === "PARTIAL") {
    payment = amount as number;
    // The payment that clears the balance makes the invoice PAID: nothing is left to pay.
    if (payment === outstanding) next = "PAID";
  }
  const paid = invoice.paid_minor + (payment ?? 0);
  return {
    kind: "move",
    to: next,
    paid_minor: paid,
    payment_reference: reference ?? invoice.payment_reference,
    detail: {
      from,
      to: next,
      reference,
      ...(payment === undefined ? {} : { amount: toMajor(payment, invoice.currency_digits) }),
      payment_update_date: date,
      ...amountsOf({ ...invoice, paid_minor: paid }),
    },
  };
}

/**
 * Decides an update against the invoice as it stands and the payments already recorded (`recorded`,
 * found for the update's `replayKey`); throws the 400 that says what is wrong. `maxPartials`: the
 * most PARTIAL payments one invoice takes. `now` is the clock, for the date's upper bound and its
 * default.
 */
export function decidePayment(
  invoice: PayableInvoice,
  change: PaymentChange,
  recorded: RecordedPayments,
  maxPartials: number,
  now: number,
): PaymentDecision {
  const from = invoice.payment_status;
  const to = change.payment_status;
  checkAmountGiven(change);
  const date = paymentDate(invoice, change, now);
  const amount = paymentMinor(invoice, change);

  // A retried PARTIAL (its answer was lost) finds its payment recorded, whatever happened since.
  if (to === "PARTIAL" && recorded.replay) return { kind: "unchanged", replay: true };
  if (to === from && to !== "PARTIAL") return { kind: "unchanged", replay: false };
  if (!canMove(from, to)) throw refusedMove(invoice, to);
  if (to === "PARTIAL") checkPartialBound(invoice, recorded.count, maxPartials);

  const outstanding = invoice.payable_minor - invoice.paid_minor;
  if (amount !== undefined) checkPaymentFits(invoice, change, amount, outstanding);
  return move(invoice, change, amount, outstanding, date);
}

/**
 * Replays the payment entries of a history: each move must be allowed, each payment must fit the
 * balance, and the balance an entry states must be the one the entries before it add up to.
 * Answers the status and amount paid the history ends with, and what does not add up.
 */
export function replayPayments(
  opening: { payment_status: string | undefined; balance: Balance },
  entries: readonly { at: string; detail: Record<string, unknown> }[],
): { payment_status: string | undefined; paid_minor: number; problems: string[] } {
  const { payable_minor: payable, currency_digits: digits } = opening.balance;
  let status = opening.payment_status;
  let paid = opening.payment_status === "PAID" ? payable : 0;
  const problems: string[] = [];
  for (const { at, detail } of entries) {
    const to = typeof detail.to === "string" ? detail.to : undefined;
    if (status !== undefined && to !== undefined && !canMove(status, to)) {
      problems.push(
        `payment entry at ${at} moves payment_status from ${status} to ${to}, which is not allowed`,
      );
    }
    if (typeof detail.amount === "number") {
      const amount = minorUnits(detail.amount, digits);
      if (amount === undefined) problems.push(`payment entry at ${at} has an amount of ${detail.amount}`);
      else paid += amount;
    } else if (to === "PAID") {
      // Entries older than PARTIAL carry no amount: PAID settled the whole invoice.
      paid = payable;
    }
    if (paid > payable) {
      problems.push(
        `payment entry at ${at} takes the amount paid to ${formatMinor(paid, digits)}, beyond the payable ${formatMinor(payable, digits)}`,
      );
    }
    if (to === "PAID" && paid !== payable) {
      problems.push(
        `payment entry at ${at} makes the invoice PAID with ${formatMinor(payable - paid, digits)} outstanding`,
      );
    }
    if (typeof detail.amount_paid === "number" && detail.amount_paid !== toMajor(paid, digits)) {
      problems.push(
        `payment entry at ${at} states amount_paid ${detail.amount_paid}, but the payments before it add up to ${formatMinor(paid, digits)}`,
      );
    }
    status = to ?? status;
  }
  return { payment_status: status, paid_minor: paid, problems };
}
