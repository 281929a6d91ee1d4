/**
 * Fairness between clients on one key. Waiters inside one client get a released lock handed
 * to them directly, so a client with several waiters could keep a contended lock forever while
 * waiters in other processes (which only see it by polling) starve. A turn bounds that: once
 * this client has held the key for `turnMs` without a break, the next release goes back to
 * the store while local waiters remain, and this client's poller stays away long enough for
 * every other client's poller to have polled and claimed it.
 *
 * The turn is measured in time rather than in hand-offs because what a yield costs is time:
 * with nobody else waiting, the lock sits free for about `pollMs` before this client takes it
 * back. A turn of a few `pollMs` keeps that cost a bounded share of the single-process rate
 * however short the holds are, and bounds how long another process waits per turn.
 *
 * A yield nobody else took (this client's next claim is the very next acquisition of the key)
 * says no other client waits: the next turn is twice as long, up to MAX_STRETCH turns, so a
 * client alone on a key loses little to yields; the first sign of another client (its holder
 * seen, or its acquisition between two of ours) brings turns back to `turnMs`.
 *
 * Times are on the process's own monotonic clock, like the poller's timers.
 */
export class LocalTurn {
  private startedAt: number | undefined;
  private awayUntil = 0;
  /** Turns last `turnMs` times this. */
  private stretch = 1;
  /** The record's token the last yield left, until this client's next turn starts. */
  private yieldedAtToken: number | undefined;

  constructor(
    private readonly turnMs: number,
    private readonly pollMs: number,
    private readonly monotonic: () => number,
  ) {}

  /**
   * This client got the key with fencing token `token`: starts a turn unless one is running (a
   * hand-off continues it).
   */
  begin(token: number): void {
    if (this.startedAt !== undefined) return;
    if (this.yieldedAtToken !== undefined) {
      const nobodyElse = token === this.yieldedAtToken + 1;
      this.stretch = nobodyElse ? Math.min(this.stretch * 2, MAX_STRETCH) : 1;
      this.yieldedAtToken = undefined;
    }
    this.startedAt = this.monotonic();
  }

  /** No local waiter wants the key: the turn is over. */
  end(): void {
    this.startedAt = undefined;
  }

  /** Another client holds the key: the turn is over, and the next one is `turnMs` again. */
  otherHolds(): void {
    this.end();
    this.stretch = 1;
    this.yieldedAtToken = undefined;
  }

  /** True when this client has kept the key for a whole turn and should let others claim it. */
  get used(): boolean {
    return this.startedAt !== undefined && this.monotonic() - this.startedAt >= this.turnMs * this.stretch;
  }

  /**
   * The key was just released to the store at the end of a turn, leaving the record's token at
   * `token`. Other clients' pollers pause
   * at most `pollMs` between polls (less when the holder's lease ends sooner), so staying away
   * for `pollMs` plus the release's own round trip lets each of them poll once and claim first.
   */
  yieldedAfter(releaseMs: number, token: number): void {
    this.end();
    this.yieldedAtToken = token;
    // A release slowed by a pause or a stalled network says nothing about other pollers: the
    // round trip counts for at most one more poll interval.
    this.awayUntil = this.monotonic() + this.pollMs + Math.min(releaseMs, this.pollMs);
  }

  /** How much longer this client's poller must leave the key to others (0: may claim). */
  msToStayAway(): number {
    return Math.max(0, this.awayUntil - this.monotonic());
  }
}

/** Turns stretch up to this many `turnMs` while no other client takes the key at yields. */
const MAX_STRETCH = 16;
