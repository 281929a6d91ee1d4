import { isDeepStrictEqual } from 'node:util';
import type { LockRecord, VersionedRecord } from '../../contract/lock-record.js';
import { holderName, LockLostError } from '../../shared/errors.js';
import type { LeaseState } from '../lease-engine.js';
import type { CasParts } from './cas-parts.js';
import { writeResolved } from './resolved-write.js';

/**
 * Writes a successor of our lease record, built by `build` from the record as we last know
 * it. On a conflict, a record that carries one of our own write ids is an earlier write of
 * ours that landed unseen: when `done` says it already did what this write wants, that is
 * the result; otherwise, if it still names our lease, it is adopted and the successor built
 * again from it (so data it stored is kept). Any other record means the lease is gone.
 */
export async function writeOwn(
  parts: CasParts,
  lease: LeaseState,
  build: (base: LockRecord) => LockRecord,
  signal?: AbortSignal,
  done?: (found: LockRecord) => boolean,
): Promise<{ record: LockRecord; earlier: boolean }> {
  let unsure = false;
  for (let attempt = 0; attempt < 3; attempt++) {
    const record = build(lease.record);
    lease.writeIds.add(record.writeId);
    trimWriteIds(lease);
    const written = await writeResolved(
      parts,
      lease.key,
      record,
      { version: lease.version },
      (found) => found.writeId === record.writeId,
      signal,
    );
    if (written.ok) {
      lease.version = written.version;
      lease.record = record;
      return { record, earlier: false };
    }
    unsure ||= written.unsure === true;
    const current = written.current === undefined ? await parts.read(lease.key, signal) : written.current;
    const ourWrite = current !== null && lease.writeIds.has(current.record.writeId);
    if (ourWrite && done?.(current.record)) {
      lease.version = current.version;
      lease.record = current.record;
      return { record: current.record, earlier: true };
    }
    const holderId = current?.record.holder?.lockId;
    // (Releases and hand-overs only.) Our own hand-over that landed unseen, to a waiter that
    // is not the one this write is for (that waiter left: it is never given a lock while this
    // lease is being written), or our own release that landed unseen with other data than
    // this write stores: nobody wrote since, so the record is still ours to write.
    const ownHandOver =
      done !== undefined && holderId !== undefined && lease.handedTo?.has(holderId) === true;
    const ownRelease = done !== undefined && ourWrite && current.record.holder === null;
    if (!ourWrite || (holderId !== lease.lockId && !ownHandOver && !ownRelease)) {
      throw new LockLostError(lease.key, describeLoss(current, ourWrite), { maybeApplied: unsure });
    }
    lease.version = current.version;
    lease.record = current.record;
  }
  throw new LockLostError(lease.key, 'the record kept changing under our own writes', {
    maybeApplied: unsure,
  });
}

/**
 * Whether `found`, an earlier write of ours that landed unseen, already stores the data a later
 * write asks for (any data when it asks for none): only then did it do what that write wants.
 */
export function storesData(found: LockRecord, data: { value: unknown } | undefined): boolean {
  return data === undefined || isDeepStrictEqual(found.data, data.value);
}

export function trimWriteIds(lease: LeaseState): void {
  if (lease.writeIds.size <= 16) return;
  const oldest = lease.writeIds.values().next().value;
  if (oldest !== undefined) lease.writeIds.delete(oldest);
}

function describeLoss(current: VersionedRecord | null, ourWrite: boolean): string {
  if (!current) return 'its record was deleted';
  const holder = current.record.holder;
  if (ourWrite) return 'an earlier write of this lock landed unseen and gave it away';
  if (!holder)
    return 'it was released by someone else (forceRelease, a release by handle, or an expired takeover and release)';
  return `it is now held by ${holderName(holder)}`;
}
