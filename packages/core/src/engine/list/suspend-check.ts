import { SuspendWatch } from '../cas/suspend-watch.js';
import type { LeaseState } from '../lease-engine.js';

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
  /** The lease write the watch's baseline belongs to (its monotonic send time). */
  private sentAt = Number.NaN;
  private readonly watch = new SuspendWatch();

  /** Why the lease may be gone, or undefined. */
  suspected(lease: LeaseState, leaseMs: number, wallNow: number, monotonicNow: number): string | undefined {
    const holder = lease.record.holder;
    if (!holder || !Number.isFinite(leaseMs)) return undefined;
    if (holder.expiresAt !== null && wallNow >= holder.expiresAt) {
      return 'the wall clock passed the expiry the lease stored (the machine may have been suspended)';
    }
    if (lease.sentAt !== this.sentAt) {
      this.sentAt = lease.sentAt;
      this.watch.sent(holder.renewedAt, lease.sentAt);
    }
    const unexplained = this.watch.unexplainedMs(wallNow, monotonicNow, leaseMs);
    if (unexplained === undefined) return undefined;
    return `the wall clock moved ${Math.round(unexplained)} ms further than the monotonic clock since the lease was last written: the machine may have been suspended`;
  }
}
