import type { Scheduler } from '../../shared/scheduler.js';
import type { LeaseState } from '../lease-engine.js';
import { SuspendCheck } from './suspend-check.js';

/**
 * Monotonic time from which a holder stops trusting a lease whose expiry was sent at `sentAt`:
 * the lease's end less a safety margin of a tenth of the lease (at most 2 s), or twice the last
 * write's duration, but never more than half the lease.
 */
export function lossDeadline(sentAt: number, leaseMs: number, lastWriteMs: number): number {
  if (!Number.isFinite(leaseMs)) return Number.POSITIVE_INFINITY;
  const margin = Math.max(Math.min(leaseMs / 10, 2000), 2 * lastWriteMs);
  return sentAt + leaseMs - Math.min(margin, leaseMs / 2);
}

/**
 * False when a claim landed so late (a slow network, SDK retries) that the lease it won can no
 * longer be trusted: such a lease is never handed to a caller; the caller keeps waiting instead.
 * The same deadline a new Lock would arm its loss timer with, and the same suspend check its
 * keeper makes: an answer that reaches a machine just woken from a suspend is on time by the
 * monotonic clock (stopped meanwhile), while another client may have taken the key since.
 */
export function arrivedInTime(lease: LeaseState, leaseMs: number, time: Scheduler): boolean {
  if (!Number.isFinite(leaseMs)) return true;
  return trustedNow(lease, leaseMs, time) && time.monotonic() < lossDeadline(lease.sentAt, leaseMs, 0);
}

/** False when the wall clock says a suspend may have outlived the lease (see SuspendCheck). */
export function trustedNow(lease: LeaseState, leaseMs: number, time: Scheduler): boolean {
  return new SuspendCheck().suspected(lease, leaseMs, time.now(), time.monotonic()) === undefined;
}
