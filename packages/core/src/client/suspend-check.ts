import type { LeaseState } from '../engine/lease-engine.js';

/**
 * Why a lease may have run out although the monotonic clock says it has not, or undefined.
 *
 * The monotonic clock (what the loss deadline counts on) stands still while the machine is
 * suspended (a laptop lid, a VM paused by its host); the wall clock moves on. So a wall clock
 * that advanced well beyond the monotonic clock since the lease's last write (both read when it
 * was sent: the record's `renewedAt`, the lease's `sentAt`) may mean a suspend that outlived the
 * lease, and the holder stops trusting it: the safe side, in every clock mode (a wall clock
 * stepped forward looks the same). A holder on trusted clocks also stops once its wall clock
 * passes the expiry it stored, as waiters read it.
 */
export function suspectedLoss(
  lease: LeaseState,
  leaseMs: number,
  wallNow: number,
  monotonicNow: number,
): string | undefined {
  const holder = lease.record.holder;
  if (!holder || !Number.isFinite(leaseMs)) return undefined;
  if (holder.expiresAt !== null && wallNow >= holder.expiresAt) {
    return 'the wall clock passed the expiry the lease stored (the machine may have been suspended)';
  }
  const unexplained = wallNow - holder.renewedAt - (monotonicNow - lease.sentAt);
  if (unexplained > suspendSlack(leaseMs)) {
    return `the wall clock moved ${Math.round(unexplained)} ms further than the monotonic clock since the lease was last written: the machine may have been suspended`;
  }
  return undefined;
}

/**
 * How far the two clocks may drift apart over a lease without a suspend: far above what clock
 * rates differ by (NTP slews by at most 0.05 %), and at most half the loss deadline's margin.
 */
function suspendSlack(leaseMs: number): number {
  return Math.min(leaseMs / 20, 1000);
}
