import type { LockRecord, SlotHolder, VersionedRecord } from '../../contract/lock-record.js';
import type { LockStore } from '../../contract/lock-store.js';
import { marginFor } from '../../protocol/writer-state.js';
import type { ResolvedClock } from '../../shared/clock.js';
import {
  LockConfigError,
  LockCorruptedError,
  LockNotHeldError,
  LockStoreError,
  passedOnError,
} from '../../shared/errors.js';
import { type RetryPolicy, withRetry } from '../../shared/retry.js';
import { sleep } from '../../shared/sleep.js';
import { checkJsonData } from '../../shared/validation.js';
import type { LeaseEngine, LeaseRequest, ListedLock, ResumedLease } from '../lease-engine.js';
import type { StoreLease } from '../store-lease.js';
import type { CasParts } from './cas-parts.js';
import { isClaimable, msUntilClaimable } from './claimable.js';
import { KeyWriters } from './key-writers.js';
import { KnownRecords } from './known-records.js';
import { checkStoreLists, listRecords } from './list-records.js';
import { writeResolved } from './resolved-write.js';
import { liveSlots, msUntilSlotFree, type SlotParts, SlotSightings } from './slot-claimable.js';
import { checkSameLimit, holdersOf, isSemaphore, limitOf } from './slot-records.js';
import type { StoreCheck } from './store-check.js';
import { WriterDriver } from './writer-driver.js';

/**
 * The lease protocol over any LockStore: each acquisition's store lease is one writer of the
 * protocol state machine (src/protocol), driven against the store by a WriterDriver. Around
 * them, this engine judges records (claimable by this client's clock mode, a semaphore's live
 * holders), reads, lists, and frees a key by force. A semaphore (limit > 1) is the same record
 * with every holder in it.
 */
export class LeaseProtocol implements LeaseEngine, CasParts, SlotParts {
  readonly known = new KnownRecords();
  readonly sightings = new SlotSightings();
  /** This client's writers by key: each learns of the records the others write, and of reads. */
  private readonly writers = new KeyWriters();
  readonly kind: string;

  constructor(
    readonly store: LockStore,
    readonly clock: ResolvedClock,
    readonly retry: RetryPolicy,
    readonly owner: string,
    /** The check of the store before the first claim (s3Store's `verify`), when the client runs one. */
    private readonly storeCheck?: StoreCheck,
  ) {
    this.kind = store.kind;
  }

  checkKey(key: string): void {
    this.store.checkKey(key);
  }

  checkLeaseMs(_leaseMs: number): void {
    // Any positive lease (or Infinity) works with compare-and-swap.
  }

  checkLimit(_limit: number): void {
    // Any limit the client accepts fits a record: its holders are counted by the record size check.
  }

  checkResume(): void {
    // Every write is conditional on the version read, so a lease can move to another client.
  }

  checkData(data: unknown, record?: LockRecord): void {
    checkJsonData(data);
    // Without the record yet, the data alone already tells when it cannot fit: refuse before any read.
    const bytes = record
      ? this.store.recordBytes({ ...record, data })
      : Buffer.byteLength(JSON.stringify(data) ?? '', 'utf8');
    if (bytes > this.store.maxRecordBytes) {
      throw new LockConfigError(
        `Lock data makes the record ${bytes} bytes${record ? '' : ' or more'}; the ${this.store.kind} store allows at most ${this.store.maxRecordBytes}. Store large data elsewhere and keep a reference in the lock.`,
      );
    }
  }

  newLease(request: LeaseRequest, acquiredAt?: number): WriterDriver {
    const { key, lockId, context, limit, heartbeatMs, verifyMs } = request;
    const leaseMs = Number.isFinite(request.leaseMs) ? request.leaseMs : null;
    // The one-request claim's condition is a state, not a version: a copy of it that lands late
    // may still apply much later, which only a lock whose lease ends by itself can afford.
    const claimBy = this.store.claim && leaseMs !== null && limit === 1 ? 'state' : 'version';
    const time = this.clock.time;
    const writer: WriterDriver = new WriterDriver({
      store: this.store,
      key,
      lockId,
      writer: time.randomId().replaceAll(':', ''),
      owner: this.owner,
      ...(context !== undefined ? { context } : {}),
      ...(acquiredAt !== undefined ? { acquiredAt } : {}),
      terms: {
        leaseMs,
        claimBy,
        marginMs: marginFor(leaseMs),
        retryMs: RETRY_BASES * this.retry.baseMs,
        renewEveryMs: leaseMs === null ? undefined : heartbeatMs,
        verifyMs,
      },
      clockMode: this.clock.mode,
      toleranceMs: this.clock.toleranceMs,
      limit,
      time,
      claimable: (current) => this.claimable(key, current),
      seen: () => {
        const known = this.known.get(key);
        return known && { current: known.current, written: known.lastWriter, tokenFloor: known.tokenFloor };
      },
      onSeen: (current, written) => {
        this.known.remember(key, current, written, time.monotonic());
        // A semaphore's other holders here build their next write on it (theirs would fail).
        if (written && current && limit > 1) this.writers.saw(key, current, writer);
      },
      liveSlots: (current) => liveSlots(this, key, current),
      ...(request.pacedByCaller ? { pacedByCaller: true } : {}),
    });
    this.writers.add(key, writer);
    if (claimBy === 'state') {
      void writer.ended.then(() => {
        if (writer.claimMayLandLate) void this.watchLateClaim(key, lockId, writer);
      });
    }
    return writer;
  }

  /**
   * A writer ended while a copy of its one-request claim may still land (its condition is the
   * record's state, so a late copy can take a free key): the record is looked at a while, and
   * an entry that writer wrote is given back, on the version it was seen at (a resume of the
   * acquisition that renewed it since keeps it). Several copies may land one after another: the
   * watch goes on for its whole time.
   */
  private async watchLateClaim(key: string, lockId: string, writer: WriterDriver): Promise<void> {
    const time = this.clock.time;
    for (let look = 0; look < LATE_CLAIM_LOOKS; look++) {
      await sleep(time, LATE_CLAIM_EVERY_MS);
      const current = await this.store.read(key).catch(() => undefined);
      const entry = current && holdersOf(current.record).find((holder) => holder.lockId === lockId);
      if (current && entry && writer.wrote(entry.writeId)) {
        await this.releaseEntry(key, current, entry, Number.POSITIVE_INFINITY).catch(() => undefined);
      }
    }
  }

  /** Whether a lock may take `current` over now, by this client's clock mode; remembers what it saw. */
  private claimable(key: string, current: VersionedRecord): boolean {
    // A semaphore's record: only once none of its holders still holds it.
    if (isSemaphore(current.record)) return liveSlots(this, key, current).length === 0;
    return isClaimable(this, key, current);
  }

  beforeClaim(key: string): Promise<void> | undefined {
    if (this.storeCheck && !this.storeCheck.passed) return this.storeCheck.ensure(key);
    return undefined;
  }

  checkHeld(key: string, limit: number, current: VersionedRecord | null): void {
    if (!current) return;
    // A plain lock beside a semaphore's holders (or slots beside a lock, or another limit) would exceed the limit they count.
    if (limit === 1 && !isSemaphore(current.record)) return;
    checkSameLimit(key, limit, current, liveSlots(this, key, current));
  }

  async resume(
    key: string,
    lockId: string,
    token: number,
    settingsFor: (leaseMs: number, limit: number) => Pick<LeaseRequest, 'heartbeatMs' | 'verifyMs'>,
    adopt: (lease: StoreLease) => void,
  ): Promise<ResumedLease> {
    const { current, entry } = await this.entryOf(key, lockId, token);
    const leaseMs = entry.leaseMs ?? Number.POSITIVE_INFINITY;
    const limit = limitOf(current.record);
    const request = { key, lockId, context: entry.context, leaseMs, limit, ...settingsFor(leaseMs, limit) };
    const lease = this.newLease(request, entry.acquiredAt);
    adopt(lease);
    const resumed = await lease.resume(current, token);
    return { lease, token: resumed, leaseMs, limit, acquiredAt: entry.acquiredAt, context: entry.context };
  }

  async releaseByHandle(
    key: string,
    lockId: string,
    token: number,
    data?: { value: unknown },
  ): Promise<void> {
    const { current, entry } = await this.entryOf(key, lockId, token);
    if (data) this.checkData(data.value, current.record);
    await this.releaseEntry(key, current, entry, token, data);
  }

  /**
   * Releases `entry` of the record as `current` shows it (conditional on that version: when the
   * record moved on meanwhile, nothing is released and this rejects).
   */
  private async releaseEntry(
    key: string,
    current: VersionedRecord,
    entry: SlotHolder,
    token: number,
    data?: { value: unknown },
  ): Promise<void> {
    const { lockId } = entry;
    const leaseMs = entry.leaseMs ?? Number.POSITIVE_INFINITY;
    const request = { key, lockId, context: entry.context, leaseMs, limit: limitOf(current.record) };
    // Taken over first (one renewal), then released: the writer's own two writes.
    const lease = this.newLease(
      { ...request, heartbeatMs: false, verifyMs: Number.POSITIVE_INFINITY },
      entry.acquiredAt,
    );
    await lease.resume(current, token);
    try {
      await lease.release(data?.value);
    } catch (error) {
      // Taken over and not given back: nobody else will (a fail-closed lease never runs out, and
      // its old holder's writes no longer land), so the writer gives it back on its own, without
      // the data the caller hears was not stored; one of unknown outcome settles the same way.
      lease.giveUp();
      throw error;
    }
  }

  /**
   * The record and the entry of the acquisition `lockId` a handle with `token` names; says what
   * the record shows when it has none (a release keeps the record, with its token, but frees it).
   */
  private async entryOf(
    key: string,
    lockId: string,
    token: number,
  ): Promise<{ current: VersionedRecord; entry: SlotHolder }> {
    const current = await this.read(key);
    const entry = current && holdersOf(current.record).find((holder) => holder.lockId === lockId);
    if (!current || !entry) {
      throw new LockNotHeldError(
        key,
        !current
          ? 'this store has no record of the lock (it was never acquired here)'
          : current.record.holder
            ? 'another acquisition holds it now (this one ended and the lock was taken over)'
            : 'nobody holds it; it was already released',
      );
    }
    // Passed on inside its client to a later caller: the record may not show that one yet,
    // but a token above the handle's means this acquisition ended.
    if (entry.token > token) throw passedOnError(key);
    return { current, entry };
  }

  /**
   * Frees `key` whoever holds it, keeping its fencing token. A record that cannot be parsed is
   * replaced by a free one whose token starts above whatever token is still readable in it or
   * was seen here, so fencing never goes back. The lock ids of the holders it freed (none
   * known for an unreadable record); null when this call freed nothing.
   */
  async forceRelease(key: string): Promise<ReadonlySet<string> | null> {
    // Each freeing write of ours, with the holders of the record it was conditional on.
    const ours = new Map<string, ReadonlySet<string>>();
    for (let attempt = 0; attempt < 5; attempt++) {
      let current: VersionedRecord | null;
      let version: string;
      let token: number;
      let data: unknown;
      let extensions: LockRecord['extensions'];
      let holders: ReadonlySet<string> = new Set();
      try {
        current = await this.read(key);
        if (!current?.record.holder) return (current && ours.get(current.record.writeId)) ?? null;
        ({ version } = current);
        holders = new Set(holdersOf(current.record).map((holder) => holder.lockId));
        token = Math.max(current.record.token, this.known.tokenFloor(key));
        data = current.record.data;
        extensions = current.record.extensions;
      } catch (error) {
        if (!(error instanceof LockCorruptedError) || error.version === undefined) throw error;
        version = error.version;
        token = Math.max(error.tokenFloor ?? 0, this.known.tokenFloor(key));
        data = undefined;
      }
      const record: LockRecord = { token, holder: null, writeId: this.clock.time.randomId() };
      if (data !== undefined) record.data = data;
      if (extensions !== undefined) record.extensions = extensions;
      ours.set(record.writeId, holders);
      const written = await writeResolved(
        this,
        key,
        record,
        { version },
        (found) => ours.has(found.writeId),
        undefined,
      );
      if (written.ok) return ours.get(written.found?.writeId ?? record.writeId)!;
    }
    throw new LockStoreError(`forceRelease("${key}") kept losing races with other writers; try again.`, {
      retryable: true,
      reason: 'throttled',
    });
  }

  checkList(): void {
    checkStoreLists(this);
  }

  list(prefix: string, signal?: AbortSignal): AsyncIterable<ListedLock> {
    return listRecords(this, prefix, signal);
  }

  async read(key: string, signal?: AbortSignal): Promise<VersionedRecord | null> {
    const current = await withRetry(this.retry, this.clock.time, () => this.store.read(key), signal);
    this.known.remember(key, current, false, this.clock.time.monotonic());
    if (current) this.writers.saw(key, current);
    return current;
  }

  /** Milliseconds until `current` may become claimable, if this client can tell; undefined otherwise. */
  msUntilClaimable(key: string, current: VersionedRecord | null): number | undefined {
    if (isSemaphore(current?.record)) return msUntilSlotFree(this, key, current);
    return msUntilClaimable(this, key, current);
  }
}

/** How often, and how many times, a late copy of a one-request claim is looked for after its writer ended. */
const LATE_CLAIM_EVERY_MS = 1_000;
const LATE_CLAIM_LOOKS = 30;
/** A writer retries its own reads and writes (not a waiter's tries) this many retry bases apart. */
const RETRY_BASES = 4;
