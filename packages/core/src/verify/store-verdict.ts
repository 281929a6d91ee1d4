/** How one check of `verifyStore` went. */
export type StoreCheckOutcome =
  /** The store behaves as Latch relies on. */
  | 'passed'
  /** The store answered, and not as Latch relies on: locks there can be held twice. */
  | 'failed'
  /** The store refused the request (501, or another error that is not an outage): locks there cannot be taken. */
  | 'refused'
  /** Not run: the store has no such operation, or an earlier check already decided. */
  | 'skipped';

export interface StoreCheck {
  /** Short, stable name: 'create-once', 'read-after-write', 'replace-current', … */
  readonly name: string;
  readonly outcome: StoreCheckOutcome;
  /** False for a check whose failure does not affect Latch's locks (told, but not refused). */
  readonly safety: boolean;
  /** What was seen, in words, and what to do when it is not 'passed'. */
  readonly detail: string;
}

/** The store's wall clock against this client's, as measured from the HTTP `Date` of one answer. */
export interface ClockReading {
  /** Server minus local, in ms: the true offset lies in [low, high] (the round trip and the Date's whole seconds bound it). */
  readonly offsetMs: { readonly low: number; readonly high: number };
  readonly roundTripMs: number;
  readonly mode: 'trusted' | 'untrusted';
  readonly toleranceMs: number;
  /** True when the offset is certainly larger than `toleranceMs` and the clock mode trusts clocks. */
  readonly beyondTolerance: boolean;
  readonly detail: string;
}

/** What `verifyStore` found. */
export interface StoreVerdict {
  /** The store's kind ('s3', 'dynamodb', 'memory', …). */
  readonly store: string;
  /** True when every safety check passed: Latch can lock there. */
  readonly safe: boolean;
  readonly checks: readonly StoreCheck[];
  /** The clock comparison, when the store states its time (S3 and DynamoDB do). */
  readonly clock: ClockReading | undefined;
  /** Store requests the probe sent, retries of the store's SDK not counted. */
  readonly requests: number;
}

/** One line per check and one for the clock: what a person reads. */
export function describeVerdict(verdict: StoreVerdict): string {
  const lines = verdict.checks.map(
    (check) =>
      `${check.outcome.padEnd(7)} ${check.name}${check.safety ? '' : ' (not needed for locks)'}: ${check.detail}`,
  );
  if (verdict.clock)
    lines.push(`${verdict.clock.beyondTolerance ? 'warning' : 'passed '} clock: ${verdict.clock.detail}`);
  return lines.join('\n');
}
