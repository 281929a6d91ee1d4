import type { LockRecord, SlotHolder, VersionedRecord } from '../../contract/lock-record.js';
import type { ClaimResult, Contender, LeaseState } from '../lease-engine.js';
import { sendClaim } from './claim.js';
import { newHolder, nextToken } from './own-lease.js';
import { liveSlots, type SlotParts } from './slot-claimable.js';
import { checkSameLimit, semaphoreRecord, slotOf, slotView } from './slot-records.js';

// Taking a slot of a semaphore: read (or start from our own last write), drop the holders whose
// leases ended, and add ours with the next token, in one write conditional on the version read.

/** One attempt at a slot of `key` (limit > 1): a lease, or the record that shows it full. */
export async function claimSlot(
  parts: SlotParts,
  key: string,
  contender: Contender,
  signal?: AbortSignal,
  readFirst = false,
): Promise<ClaimResult> {
  const limit = contender.terms.limit ?? 1;
  const known = parts.known.get(key);
  // As for a lock: create when the key was never seen, start from our own write, else read.
  let current: VersionedRecord | null | undefined;
  if (readFirst) current = undefined;
  else if (known === undefined) current = null;
  else if (known.lastWriter) current = known.current;
  // Our own last write may name holders that have left since: a full record from it is read again.
  let fresh = current === undefined;
  for (let step = 0; step < 3; step++) {
    signal?.throwIfAborted();
    if (current === undefined) {
      current = await parts.read(key, signal);
      fresh = true;
    }
    const mine = slotOf(current?.record, contender.lockId);
    // Our slot in a record not read just now (our last write as we remember it, perhaps an answer
    // that came late after the record moved on) proves nothing: adopt only from a fresh read.
    if (mine && !fresh) {
      current = undefined;
      continue;
    }
    if (mine && current) {
      // Our lock id with a write that is not ours: the lock was resumed elsewhere; not ours to take.
      if (!isOwnSlot(mine, contender)) return { lease: null, current };
      return { lease: adoptSlot(parts, key, current, mine, contender) };
    }
    const live = liveSlots(parts, key, current);
    checkSameLimit(key, limit, current, live);
    if (live.length >= limit) {
      if (!fresh) {
        current = undefined;
        continue;
      }
      return { lease: null, current };
    }
    const token = nextToken(parts, key, current);
    const slot: SlotHolder = {
      ...newHolder(parts, contender.lockId, contender.terms),
      token,
      writeId: parts.clock.time.randomId(),
    };
    const record = semaphoreRecord(
      current?.record,
      limit,
      [...live, slot],
      token,
      parts.clock.time.randomId(),
    );
    contender.writeIds?.add(slot.writeId); // a settling claim that lands is ours to release
    const { written, sentAt } = await sendClaim(
      parts,
      key,
      current,
      record,
      contender,
      (found) => isOwnSlot(slotOf(found, contender.lockId), contender),
      signal,
    );
    if (written.ok) {
      const found = written.found ?? record;
      const landed = slotOf(found, contender.lockId)!;
      // Another attempt of this contender may be what landed: timed from the first send then.
      const start = landed.writeId === slot.writeId ? sentAt : (contender.firstSentAt ?? sentAt);
      return { lease: slotLease(key, contender.lockId, written.version, found, start) };
    }
    current = written.current;
    fresh = true;
    const landed = slotOf(current?.record, contender.lockId);
    if (landed && current) {
      if (!isOwnSlot(landed, contender)) return { lease: null, current };
      return { lease: adoptSlot(parts, key, current, landed, contender) };
    }
  }
  const latest = current === undefined ? await parts.read(key, signal) : current;
  return { lease: null, current: latest };
}

/** The lease of our slot in `record` (at `version`), its lease counted from monotonic `sentAt`. */
export function slotLease(
  key: string,
  lockId: string,
  version: string,
  record: LockRecord,
  sentAt: number,
): LeaseState {
  const slot = slotOf(record, lockId)!;
  return {
    key,
    lockId,
    version,
    record: slotView(record, slot),
    shared: record,
    sentAt,
    writeIds: new Set([record.writeId, slot.writeId]),
  };
}

/** A slot of ours found in the record (a write of ours landed after all): dated from the first send. */
function adoptSlot(
  parts: SlotParts,
  key: string,
  current: VersionedRecord,
  slot: SlotHolder,
  contender: Contender,
): LeaseState {
  parts.known.remember(key, current, false, parts.clock.time.monotonic());
  const lease = slotLease(key, slot.lockId, current.version, current.record, 0);
  // A lease whose first write cannot be dated is never trusted (settling only releases it).
  lease.sentAt = contender.firstSentAt ?? Number.NEGATIVE_INFINITY;
  return lease;
}

/**
 * A slot under the contender's lock id that one of its own writes produced; the same lock id
 * with another write is the lock resumed elsewhere (see Contender.writeIds).
 */
function isOwnSlot(slot: SlotHolder | undefined, contender: Contender): boolean {
  if (slot === undefined) return false;
  return contender.writeIds === undefined || contender.writeIds.has(slot.writeId);
}
