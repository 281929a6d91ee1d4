import type { LockRecord } from '../../contract/lock-record.js';
import type { LeaseState, LeaseTerms } from '../lease-engine.js';

/**
 * How many fencing tokens a hand-over reserves above the one it gives, and a renewal keeps in
 * reserve: the lock can then pass among the client's own callers this many times with no
 * write. Tokens only need to rise and never repeat; skipped ones cost nothing.
 */
export const RESERVED_TOKENS = 1024;

/**
 * Passes a plain lease to another caller of the same client without a write: the caller takes
 * the next reserved token, and the new holder's fields (token, acquiredAt, context) go into the
 * lease's record as the next write (a renewal at the latest) will store it. False when no reserved token is
 * left or the lease is not a plain one written as such (the lock is then handed over with a
 * write, which reserves tokens again).
 *
 * Safe because nothing about the lease in the store changes: the version, the holder's lock
 * id and its expiry stay, the client keeps renewing the same lease, and any other claim starts
 * above the record's token, which is above every reserved one.
 */
export function passLeaseLocally(lease: LeaseState, terms: LeaseTerms, now: number): boolean {
  const holder = lease.record.holder;
  if (lease.shared || lease.adopted || !holder || holder.lockId !== lease.lockId) return false;
  if (holder.token === undefined || holder.token >= lease.record.token) return false;
  const record: LockRecord = {
    ...lease.record,
    holder: { ...holder, token: holder.token + 1, acquiredAt: now, context: terms.context },
  };
  lease.record = record;
  return true;
}

/** The record token a renewal of a holder in the middle of local passes writes: enough reserved ahead again. */
export function topUpReserve(record: LockRecord): number {
  const own = record.holder?.token;
  return own === undefined ? record.token : reserveAhead(own, record.token);
}

/** The record token a holder on token `own` writes in a record whose token is `top`: half the reserve left at least. */
export function reserveAhead(own: number, top: number): number {
  return top - own >= RESERVED_TOKENS / 2 ? top : own + RESERVED_TOKENS;
}
