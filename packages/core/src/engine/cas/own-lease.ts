import type { LeaseHolder, LockRecord, VersionedRecord } from '../../contract/lock-record.js';
import type { Contender, LeaseState, LeaseTerms } from '../lease-engine.js';
import type { CasParts } from './cas-parts.js';
import { storedExpiry } from './stored-expiry.js';

// The pieces of a lease this client holds or is about to: its holder, its token, and the lease state made from a record.

export function newHolder(
  parts: CasParts,
  lockId: string,
  terms: LeaseTerms,
  acquiredAt?: number,
): LeaseHolder {
  const now = parts.clock.time.now();
  const leaseMs = Number.isFinite(terms.leaseMs) ? terms.leaseMs : null;
  return {
    owner: parts.owner,
    lockId,
    acquiredAt: acquiredAt ?? now,
    renewedAt: now,
    leaseMs,
    expiresAt: storedExpiry(parts.clock, now, leaseMs),
    context: terms.context,
  };
}

/** The token a new acquisition takes: above the record's and above any this client has seen for the key. */
export function nextToken(parts: CasParts, key: string, current: VersionedRecord | null): number {
  return Math.max(current?.record.token ?? 0, parts.known.tokenFloor(key)) + 1;
}

export function ownLease(
  parts: CasParts,
  key: string,
  lockId: string,
  version: string,
  record: LockRecord,
  sentAt: number,
  writeId: string,
): LeaseState {
  parts.known.remember(key, { version, record }, true, parts.clock.time.monotonic());
  return { key, lockId, version, record, sentAt, writeIds: new Set([writeId]) };
}

/**
 * The lease a record just read stands for, to write on from (release, resume, settle): every
 * write is conditional on the version read, so one that moved on since makes it fail safely.
 */
export function leaseFromRecord(
  key: string,
  lockId: string,
  current: VersionedRecord,
  sentAt: number,
  record: LockRecord = current.record,
): LeaseState {
  return {
    key,
    lockId,
    version: current.version,
    record,
    sentAt,
    writeIds: new Set([current.record.writeId]),
  };
}

/** Takes over a lease whose record names our lockId (a write of ours landed after all). */
export function adopt(
  parts: CasParts,
  key: string,
  current: VersionedRecord,
  contender: Contender,
): LeaseState {
  const lease = ownLease(
    parts,
    key,
    contender.lockId,
    current.version,
    current.record,
    // A lease whose first write cannot be dated is never trusted (settling only releases it).
    contender.firstSentAt ?? Number.NEGATIVE_INFINITY,
    current.record.writeId,
  );
  lease.adopted = true;
  return lease;
}

/** Keeps what a new record inherits from the one it replaces: data and fields a newer Latch wrote. */
export function keepUnknownFields(record: LockRecord, previous: LockRecord | undefined): void {
  if (previous?.data !== undefined) record.data = previous.data;
  if (previous?.extensions !== undefined) record.extensions = previous.extensions;
}
