/**
 * When another client's turn with a key should end, so this client's poller looks right then
 * instead of up to a poll interval later (with pollers that only sleep between polls, the key
 * would sit free for most of that interval at every yield).
 *
 * A turn starts when a new acquisition (a new lock id) takes the key: somewhere after this
 * client last knew the key was not held by it. Clients of the same configuration yield after
 * the same `turnMs`, so the turn ends at the earliest that much after that point. A holder
 * that does not yield then (no waiters of its own, another turn length) costs a few polls.
 */
export class OtherTurn {
  private holder: string | undefined;
  /** The earliest the current holder's turn can have started (monotonic ms). */
  private since = 0;
  private passed = false;
  /** The last time this client knew who held the key: a claim sent, or its own release. */
  private knownAt: number | undefined;

  constructor(
    private readonly turnMs: number,
    private readonly monotonic: () => number,
  ) {}

  /** This client knew who held the key at `at` (it released it then). */
  knew(at: number): void {
    this.knownAt = at;
  }

  /**
   * A claim sent at `sentAt` found the acquisition `lockId` holding the key. Returns the ms
   * until its turn should end, or 'ended' the first time that point has passed (poll briskly
   * from now on), or undefined when the end is unknown or already polled for.
   */
  sawHolder(lockId: string, sentAt: number): number | 'ended' | undefined {
    if (lockId !== this.holder) {
      this.holder = lockId;
      this.since = this.knownAt ?? sentAt;
      this.passed = false;
    }
    this.knownAt = sentAt;
    if (!Number.isFinite(this.turnMs) || this.passed) return undefined;
    const left = this.since + this.turnMs - this.monotonic();
    if (left > 0) return left;
    this.passed = true;
    return 'ended';
  }
}
