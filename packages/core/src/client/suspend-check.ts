import type { LeaseState } from '../engine/lease-engine.js';

/**
 * Tells a lease that may have run out although the monotonic clock says it has not.
 *
 * The monotonic clock (what the loss deadline counts on) stands still while the machine is
 * suspended (a laptop lid, a VM paused by its host); the wall clock moves on. So a wall clock
 * that advanced well beyond the monotonic clock since the lease's last write (both read when it
 * was sent: the record's `renewedAt`, the lease's `sentAt`) may mean a suspend that outlived the
 * lease, and the holder stops trusting it: the safe side, in every clock mode (a wall clock
 * stepped forward looks the same). A wall clock stepped back moves the baseline down, so that a
 * suspend after it is still seen, once a check ran in between. A holder on trusted clocks also
 * stops once its wall clock passes the expiry it stored, as waiters read it.
 */
export class SuspendCheck {
  /** The lease write the baseline belongs to (its monotonic send time). */
  private sentAt = Number.NaN;
  /** Least wall-minus-monotonic gap seen since that write. */
  private baseline = Number.POSITIVE_INFINITY;

  /** Why the lease may be gone, or undefined. */
  suspected(lease: LeaseState, leaseMs: number, wallNow: number, monotonicNow: number): string | undefined {
    const holder = lease.record.holder;
    if (!holder || !Number.isFinite(leaseMs)) return undefined;
    if (holder.expiresAt !== null && wallNow >= holder.expiresAt) {
      return 'the wall clock passed the expiry the lease stored (the machine may have been suspended)';
    }
    if (lease.sentAt !== this.sentAt) {
      this.sentAt = lease.sentAt;
      this.baseline = holder.renewedAt - lease.sentAt;
    }
    const gap = wallNow - monotonicNow;
    const unexplained = gap - this.baseline;
    if (unexplained > suspendSlack(leaseMs)) {
      return `the wall clock moved ${Math.round(unexplained)} ms further than the monotonic clock since the lease was last written: the machine may have been suspended`;
    }
    this.baseline = Math.min(this.baseline, gap);
    return undefined;
  }
}

/**
 * How far the two clocks may drift apart over a lease without a suspend: far above what clock
 * rates differ by (NTP slews by at most 0.05 %), and at most half the loss deadline's margin.
 */
function suspendSlack(leaseMs: number): number {
  return Math.min(leaseMs / 20, 1000);
}
