import { isDeepStrictEqual } from 'node:util';
import type { LockRecord, SlotHolder } from '../../contract/lock-record.js';
import { LockLostError, LockStoreError } from '../../shared/errors.js';
import { backoffMs } from '../../shared/retry.js';
import { sleep } from '../../shared/sleep.js';
import type { LeaseState } from '../lease-engine.js';
import { storesData } from './own-write.js';
import { writeResolved } from './resolved-write.js';
import type { SlotParts } from './slot-claimable.js';
import { holdersOf, limitOf, semaphoreRecord, slotOf, slotView } from './slot-records.js';

/** What one write does to our slot: its new entry (null: gone), and data to store with it. */
export interface SlotChange {
  slot: SlotHolder | null;
  data?: { value: unknown } | undefined;
}

/**
 * Writes a change of our own slot (renew: new entry; release: none), rebuilt on whatever the
 * record is now: other holders write the same record, so a failed condition usually means
 * only that one of them renewed, and the write is made again on their record. Our slot gone,
 * or rewritten by a write that is not ours (another client resumed it), means the lease is lost.
 */
export async function writeOwnSlot(
  parts: SlotParts,
  lease: LeaseState,
  change: (slot: SlotHolder) => SlotChange,
  signal?: AbortSignal,
): Promise<void> {
  let unsure = false;
  for (let attempt = 0; attempt < MAX_REBASES; attempt++) {
    // Waiters claim the record as often as it frees up: after two lost races, back off with
    // jitter so this write gets its turn instead of racing them in step.
    if (attempt >= 2) {
      const { time } = parts.clock;
      // Kept alive: a caller may be awaiting this release as the last thing its process does.
      const pauseMs = backoffMs(parts.retry, Math.min(attempt - 2, 5), time.random);
      await sleep(time, pauseMs, signal, { keepAlive: true });
    }
    // This client may have written or read the record since this lease did (another local
    // holder's claim or release): start from that, saving a refused write and a read.
    const seen = parts.known.get(lease.key)?.current;
    const ourSlot = slotOf(seen?.record, lease.lockId);
    if (seen && seen.version !== lease.version && ourSlot && lease.writeIds.has(ourSlot.writeId)) {
      keep(lease, seen.version, seen.record);
    }
    const base = lease.shared!;
    // Absent only when going on from a release of ours that landed unseen (below).
    const slot = slotOf(base, lease.lockId);
    const { slot: next, data: asked } = change(slot!);
    // An earlier attempt of this write that landed unseen (our slot in the record is its own)
    // stored this data then; another holder may have written its own since, acknowledged to
    // it, which this write must not put back over: it writes only its change of our slot.
    const data = slot && landedWithData(lease, slot.writeId, asked) ? undefined : asked;
    const others = holdersOf(base).filter((holder) => holder.lockId !== lease.lockId);
    const record = semaphoreRecord(
      base,
      limitOf(base),
      next ? [...others, next] : others,
      base.token,
      parts.clock.time.randomId(),
    );
    if (data) record.data = data.value;
    lease.writeIds.add(record.writeId);
    if (next) lease.writeIds.add(next.writeId);
    trimSlotWriteIds(lease, slot?.writeId);
    if (next && data) rememberData(lease, next.writeId, data.value);
    const isOurs = (found: LockRecord) =>
      next ? slotOf(found, lease.lockId)?.writeId === next.writeId : found.writeId === record.writeId;
    const written = await writeResolved(parts, lease.key, record, { version: lease.version }, isOurs, signal);
    if (written.ok) {
      // Known to be written: a later call with the same data is a new call, stored again.
      lease.slotData?.clear();
      keep(lease, written.version, written.found ?? record);
      return;
    }
    unsure ||= written.unsure === true;
    if (!written.unsure) {
      // Certainly not stored: its ids can never turn up, and would only crowd out ours that can.
      lease.writeIds.delete(record.writeId);
      if (next) lease.writeIds.delete(next.writeId);
      if (next) lease.slotData?.delete(next.writeId);
    }
    const current = written.current === undefined ? await parts.read(lease.key, signal) : written.current;
    const ours = slotOf(current?.record, lease.lockId);
    if (!current || !ours || !lease.writeIds.has(ours.writeId)) {
      // A release of ours that landed unseen did what this release wants, unless it stored
      // other data: nobody wrote since, so this release goes on from that record.
      if (!next && current && !ours && lease.writeIds.has(current.record.writeId)) {
        if (storesData(current.record, data)) return;
        keep(lease, current.version, current.record);
        continue;
      }
      throw new LockLostError(
        lease.key,
        !current
          ? 'its record was deleted'
          : ours
            ? 'another client resumed it with its handle'
            : 'its slot was freed by someone else (forceRelease, a release by handle, or a takeover after it expired)',
        { maybeApplied: unsure },
      );
    }
    keep(lease, current.version, current.record);
  }
  // Other holders kept writing first; the caller retries (a renewal sooner, a release in the background).
  throw new LockStoreError(
    `Lock "${lease.key}": other holders of the semaphore kept writing its record first; trying again.`,
    { retryable: true, reason: 'throttled' },
  );
}

/**
 * Keeps the lease's write ids bounded, never dropping `current`: the write id our slot has in
 * the record as we last knew it, by which the next write recognises the slot as still ours.
 */
function trimSlotWriteIds(lease: LeaseState, current: string | undefined): void {
  for (const id of lease.writeIds) {
    if (lease.writeIds.size <= MAX_WRITE_IDS) return;
    if (id !== current) lease.writeIds.delete(id);
  }
}

/** Whether our slot, written by `slotWriteId`, was written by an attempt of unknown outcome that carried `data`. */
function landedWithData(
  lease: LeaseState,
  slotWriteId: string,
  data: { value: unknown } | undefined,
): boolean {
  const slotData = lease.slotData;
  if (!data || !slotData?.has(slotWriteId)) return false;
  return isDeepStrictEqual(slotData.get(slotWriteId), data.value);
}

/** Remembers the data a slot write carries until its outcome is known (bounded like the write ids). */
function rememberData(lease: LeaseState, slotWriteId: string, value: unknown): void {
  lease.slotData ??= new Map();
  lease.slotData.set(slotWriteId, value);
  for (const id of lease.slotData.keys()) {
    if (lease.slotData.size <= MAX_WRITE_IDS) return;
    lease.slotData.delete(id);
  }
}

/** Our lease as of `record` at `version`, our slot still in it. */
function keep(lease: LeaseState, version: string, record: LockRecord): void {
  lease.version = version;
  lease.shared = record;
  const slot = slotOf(record, lease.lockId);
  if (slot) lease.record = slotView(record, slot);
}

/** Attempts before giving up for now: each failed one means another writer's write landed first. */
const MAX_REBASES = 20;
/** Write ids a lease remembers: enough for the writes whose outcome may still be unknown. */
const MAX_WRITE_IDS = 16;
