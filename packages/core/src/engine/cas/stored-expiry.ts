import type { ClockMode } from '../../shared/clock.js';

// The wall-clock end of a lease that a holder stores, which trusted waiters go by.

/**
 * The expiry a holder writes for a lease of `leaseMs` (null: fail-closed) sent at wall time
 * `now`. A holder on untrusted clocks writes none: its wall clock may be hours off, and a
 * trusted waiter going by it would take a live lease over. A finite lease with no expiry is
 * judged by the untrusted rule in every mode (the record unchanged for a full lease), and an
 * older Latch on trusted clocks never takes it over (it reads it as fail-closed).
 */
export function storedExpiry(clock: { mode: ClockMode }, now: number, leaseMs: number | null): number | null {
  if (leaseMs === null || clock.mode === 'untrusted') return null;
  return now + leaseMs;
}
