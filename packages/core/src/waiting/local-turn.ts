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
 * Times are on the process's own monotonic clock, like the poller's timers.
 */
export class LocalTurn {
  private startedAt: number | undefined;
  private awayUntil = 0;

  constructor(
    private readonly turnMs: number,
    private readonly pollMs: number,
    private readonly monotonic: () => number,
  ) {}

  /** This client got the key: starts a turn unless one is running (a hand-off continues it). */
  begin(): void {
    this.startedAt ??= this.monotonic();
  }

  /** Someone else holds the key, or no local waiter wants it: the turn is over. */
  end(): void {
    this.startedAt = undefined;
  }

  /** True when this client has kept the key for a whole turn and should let others claim it. */
  get used(): boolean {
    return this.startedAt !== undefined && this.monotonic() - this.startedAt >= this.turnMs;
  }

  /**
   * The key was just released to the store at the end of a turn. Other clients' pollers pause
   * at most `pollMs` between polls (less when the holder's lease ends sooner), so staying away
   * for `pollMs` plus the release's own round trip lets each of them poll once and claim first.
   */
  yieldedAfter(releaseMs: number): void {
    this.end();
    // A release slowed by a pause or a stalled network says nothing about other pollers: the
    // round trip counts for at most one more poll interval.
    this.awayUntil = this.monotonic() + this.pollMs + Math.min(releaseMs, this.pollMs);
  }

  /** How much longer this client's poller must leave the key to others (0: may claim). */
  msToStayAway(): number {
    return Math.max(0, this.awayUntil - this.monotonic());
  }
}
