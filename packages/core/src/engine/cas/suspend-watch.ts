/**
 * A suspend the monotonic clock missed, as one writer watches for it. The monotonic clock (what
 * its deadlines count on) stands still while the machine is suspended; the wall clock moves on.
 * So a wall clock that moved well beyond the monotonic one since the writer's last write was
 * sent (both read then) may mean a suspend that outlived the lease. A wall clock stepped back
 * lowers the baseline, so that a suspend after it is still seen once a check ran in between.
 */
export class SuspendWatch {
  /** The least wall-minus-monotonic gap seen since the last write was sent. */
  #baseline = Number.POSITIVE_INFINITY;

  /** A write is sent now: the clocks agree as they read now. */
  sent(wall: number, monotonic: number): void {
    this.#baseline = wall - monotonic;
  }

  /**
   * How far (ms) the wall clock moved beyond the monotonic one since the last write, when that
   * is more than the slack a lease of `leaseMs` allows; undefined otherwise.
   */
  unexplainedMs(wall: number, monotonic: number, leaseMs: number): number | undefined {
    const gap = wall - monotonic;
    const unexplained = gap - this.#baseline;
    if (unexplained > suspendSlack(leaseMs)) return unexplained;
    this.#baseline = Math.min(this.#baseline, gap);
    return undefined;
  }
}

/**
 * How far the two clocks may drift apart over a lease without a suspend: far above what clock
 * rates differ by (NTP slews by at most 0.05 %), and at most half the usual margin.
 */
function suspendSlack(leaseMs: number): number {
  return Math.min(leaseMs / 20, 1000);
}
