/**
 * A suspend the monotonic clock missed, as one writer watches for it. The monotonic clock (what
 * its deadlines count on) stands still while the machine is suspended; the wall clock moves on.
 * So a wall clock that moved well beyond the monotonic one since the writer's last write was
 * sent (both read then) may mean a suspend that outlived the lease. A wall clock stepped back
 * lowers the baseline, so that a suspend after it is still seen once a check ran in between.
 * The same rule as the client's SuspendCheck, kept per writer.
 */
export class SuspendWatch {
  /** The least wall-minus-monotonic gap seen since the last write was sent. */
  #baseline = Number.POSITIVE_INFINITY;

  /** A write is sent now: the clocks agree as they read now. */
  sent(wall: number, monotonic: number): void {
    this.#baseline = wall - monotonic;
  }

  /** True when the clocks moved apart by more than the slack a lease of `leaseMs` allows since the last write. */
  suspected(wall: number, monotonic: number, leaseMs: number): boolean {
    const gap = wall - monotonic;
    if (gap - this.#baseline > suspendSlack(leaseMs)) return true;
    this.#baseline = Math.min(this.#baseline, gap);
    return false;
  }
}

/**
 * How far the two clocks may drift apart over a lease without a suspend: far above what clock
 * rates differ by (NTP slews by at most 0.05 %), and at most half the usual margin.
 */
function suspendSlack(leaseMs: number): number {
  return Math.min(leaseMs / 20, 1000);
}
