import type { LockRecord, VersionedRecord } from '../../contract/lock-record.js';
import type { ClaimRequest, LockStore, WriteCondition } from '../../contract/lock-store.js';
import { LockStoreError } from '../../shared/errors.js';
import { withRetry } from '../../shared/retry.js';
import type { ClaimResult, Contender } from '../lease-engine.js';
import type { CasParts } from './cas-parts.js';
import { isClaimable } from './claimable.js';
import { adopt, keepUnknownFields, newHolder, nextToken, ownLease } from './own-lease.js';
import { readAfterUnknownOutcome, stillUnknown, writeResolved } from './resolved-write.js';
import { isSemaphore } from './slot-records.js';

// The two ways to claim a key: read and write conditionally on the version (every store), or
// one request whose condition is the record's state (stores that offer it).

/** A claim as read + conditional write: what every store can do, and the only kind a later write of ours can fence off. */
export async function claimByVersion(
  parts: CasParts,
  key: string,
  contender: Contender,
  signal?: AbortSignal,
  readFirst = false,
): Promise<ClaimResult> {
  const known = parts.known.get(key);
  // Which request to start with: create when we have never seen the key (fresh keys are the
  // common case), replace when our own write is the last we know of and left it claimable (or
  // ours), otherwise read first: a holder we wrote may have been freed since (a forceRelease),
  // and only a read can tell.
  let current: VersionedRecord | null | undefined;
  if (readFirst) current = undefined;
  else if (known === undefined) current = null;
  else if (known.lastWriter && (heldBy(known.current, contender) || isClaimable(parts, key, known.current))) {
    current = known.current;
  }
  for (let step = 0; step < 3; step++) {
    signal?.throwIfAborted();
    if (current === undefined) current = await parts.read(key, signal);
    if (heldBy(current, contender)) return { lease: adopt(parts, key, current!, contender) };
    if (!isClaimable(parts, key, current)) return { lease: null, current };
    const holder = newHolder(parts, contender.lockId, contender.terms);
    const record: LockRecord = {
      token: nextToken(parts, key, current),
      holder,
      writeId: parts.clock.time.randomId(),
    };
    keepUnknownFields(record, current?.record);
    contender.writeIds?.add(record.writeId); // a settling claim that lands is ours to release
    const { written, sentAt } = await sendClaim(
      parts,
      key,
      current,
      record,
      contender,
      (found) => isOwnRecord(found, contender),
      signal,
    );
    if (written.ok) {
      // Recognised on a re-read, the record may be another attempt of this contender (a
      // settling claim racing the waiter's own): take it as found, timed from the first send.
      if (written.found && written.found.writeId !== record.writeId) {
        return { lease: adopt(parts, key, { version: written.version, record: written.found }, contender) };
      }
      return {
        lease: ownLease(parts, key, contender.lockId, written.version, record, sentAt, record.writeId),
      };
    }
    current = written.current;
    if (heldBy(current, contender)) return { lease: adopt(parts, key, current!, contender) };
    if (current !== undefined && !isClaimable(parts, key, current)) return { lease: null, current };
  }
  const latest = current === undefined ? await parts.read(key, signal) : current;
  return { lease: null, current: latest };
}

/**
 * Sends a claim's write, conditional on `current` (created when null), counting the
 * contender's lease from its first send.
 */
export async function sendClaim(
  parts: CasParts,
  key: string,
  current: VersionedRecord | null,
  record: LockRecord,
  contender: Contender,
  isOurs: (found: LockRecord) => boolean,
  signal?: AbortSignal,
): Promise<{ written: Awaited<ReturnType<typeof writeResolved>>; sentAt: number }> {
  const condition: WriteCondition = current === null ? { absent: true } : { version: current.version };
  const sentAt = parts.clock.time.monotonic();
  contender.firstSentAt ??= sentAt;
  const written = await writeResolved(parts, key, record, condition, isOurs, signal);
  return { written, sentAt };
}

export async function claimInOneRequest(
  parts: CasParts,
  key: string,
  contender: Contender,
  signal?: AbortSignal,
): Promise<ClaimResult> {
  const claim = parts.store.claim!.bind(parts.store);
  const record: LockRecord = {
    token: 0,
    holder: newHolder(parts, contender.lockId, contender.terms),
    writeId: parts.clock.time.randomId(),
  };
  contender.writeIds?.add(record.writeId); // recognised as its own should the answer be lost
  const seen = parts.known.get(key);
  const tokenFloor = parts.known.tokenFloor(key);
  // A lease judged by watching its record (untrusted clocks, or a holder on them) is claimed by
  // the version seen unchanged for a lease; one with a stored expiry also once it has passed.
  const version = seen?.current && isClaimable(parts, key, seen.current) ? seen.current.version : undefined;
  const request: ClaimRequest =
    parts.clock.mode === 'trusted'
      ? // The same instant as the holder's acquiredAt: a takeover never starts before the lease it ends.
        { record, expiredBefore: record.holder!.acquiredAt - parts.clock.toleranceMs, version }
      : { record, version };
  if (tokenFloor > 0) request.tokenFloor = tokenFloor;
  const sentAt = parts.clock.time.monotonic();
  contender.firstSentAt ??= sentAt;
  let outcome: Awaited<ReturnType<NonNullable<LockStore['claim']>>>;
  try {
    outcome = await withRetry(parts.retry, parts.clock.time, () => claim(key, request), signal);
  } catch (error) {
    if (!(error instanceof LockStoreError && error.maybeApplied)) throw error;
    const current = await readAfterUnknownOutcome(parts, key, error, signal);
    if (heldBy(current, contender)) return { lease: adopt(parts, key, current!, contender) };
    // Not there now, but a request whose condition is a state may still land later: unknown.
    throw stillUnknown(key, error);
  }
  if (outcome.ok) {
    return {
      lease: ownLease(parts, key, contender.lockId, outcome.version, outcome.record, sentAt, record.writeId),
    };
  }
  parts.known.remember(key, outcome.current, false, parts.clock.time.monotonic());
  if (heldBy(outcome.current, contender)) {
    return { lease: adopt(parts, key, outcome.current!, contender) };
  }
  // A record older than a token this client saw (deleted and created again): claim by
  // version so the token goes on from the floor instead of back.
  if ((outcome.current?.record.token ?? 0) < tokenFloor && isClaimable(parts, key, outcome.current)) {
    return claimByVersion(parts, key, contender, signal);
  }
  if (outcome.maybeApplied) throw stillUnknown(key);
  return { lease: null, current: outcome.current };
}

/**
 * Whether `record` is this contender's acquisition: a lock (not a semaphore) held under its lock
 * id, produced by one of its own writes.
 */
function heldBy(current: VersionedRecord | null | undefined, contender: Contender): boolean {
  const record = current?.record;
  return record !== undefined && !isSemaphore(record) && isOwnRecord(record, contender);
}

/** A record naming the contender's lock id that one of its own writes produced (see Contender.writeIds). */
function isOwnRecord(record: LockRecord, contender: Contender): boolean {
  if (record.holder?.lockId !== contender.lockId) return false;
  return contender.writeIds === undefined || contender.writeIds.has(record.writeId);
}
