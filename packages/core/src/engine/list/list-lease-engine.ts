import type { VersionedRecord } from '../../contract/lock-record.js';
import {
  holderName,
  LockConfigError,
  LockCorruptedError,
  LockLostError,
  LockNotHeldError,
  LockStoreError,
} from '../../shared/errors.js';
import { mapInOrder } from '../../shared/map-in-order.js';
import { withRetry } from '../../shared/retry.js';
import { sleep } from '../../shared/sleep.js';
import {
  type ClaimResult,
  type Contender,
  type EngineEnvironment,
  type LeaseEngine,
  type LeaseRequest,
  type LeaseState,
  LIST_READS_AT_ONCE,
  type ListedLock,
  type ResumedLease,
} from '../lease-engine.js';
import { ContenderRecords, type Listing, toRecord } from './contender-records.js';
import { LeftoverObjects } from './leftover-objects.js';
import type { ListBucket } from './list-bucket.js';
import { type ContenderBody, encodeContenderBody } from './list-contender-body.js';
import {
  contendersInOrder,
  entryKey,
  isLive,
  type ListContender,
  latestObjectKey,
  parseEntry,
} from './list-entries.js';
import { ListLease } from './list-lease.js';
import type { ListLeaseOps } from './list-lease-ops.js';
import { WithdrawnContenders } from './withdrawn-contenders.js';

export const LIST_DATA_REFUSED =
  'The S3 list strategy keeps no lock record, so it cannot store lock data (update(data), release({ data }), release(key, handle, { data })). Keep the data in your own object or table, or use s3Store (S3 with conditional writes) or dynamoStore, which store data atomically with the lock.';

/**
 * The S3 list strategy, for S3-compatible stores without conditional writes. An attempt
 * uploads `<name>.<created>.<uuid>.<expires>`, waits until no contender that sorts before it
 * can still appear, lists `<name>.`, and holds the lock when its object is the first live one;
 * otherwise it deletes its object and the client polls again. Expired objects are ignored,
 * never deleted. Fencing tokens are the holder's `created` time.
 *
 * Why the wait (`settleMs`): `created` is read before the upload, so a slow upload could land
 * after a later contender already listed and decided. Every upload that took longer than
 * `settleMs` is withdrawn, and a contender lists only once `created + settleMs` (plus the clock
 * tolerance) has passed: by then every object that could sort before it is visible.
 */
export class ListLeaseEngine implements LeaseEngine, ListLeaseOps {
  readonly kind = 's3-list';
  readonly clock: EngineEnvironment['clock'];
  readonly retry: EngineEnvironment['retry'];
  private readonly owner: string;
  /** The contenders of each lock, as listed and read from the bucket. */
  private readonly records: ContenderRecords;
  /** Our own objects a failed delete left behind, per lock: deleted again on the next request. */
  private readonly leftovers: LeftoverObjects;
  /** Our contenders that are over: their objects are nobody's, and one uploaded late is deleted again. */
  private readonly withdrawn: WithdrawnContenders;
  /** Renewal uploads of a held lease (by lock id) whose answer never came: they may land after it ends. */
  private readonly unsureRenewals = new Map<string, Set<string>>();

  constructor(
    private readonly bucket: ListBucket,
    environment: EngineEnvironment,
    private readonly settleMs: number,
  ) {
    if (environment.clock.mode === 'untrusted') {
      throw new LockConfigError(
        "The S3 list strategy orders contenders and expires them by wall-clock times in object names, so it cannot run with clock: 'untrusted'. Use clock: 'trusted' (with a toleranceMs for the skew you expect), or s3Store / dynamoStore, which support untrusted clocks.",
      );
    }
    this.clock = environment.clock;
    this.retry = environment.retry;
    this.owner = environment.owner;
    this.withdrawn = new WithdrawnContenders(bucket, environment.clock.time, environment.clock.toleranceMs);
    this.records = new ContenderRecords(bucket, environment.retry, environment.clock, (uuid) =>
      this.withdrawn.has(uuid),
    );
    this.leftovers = new LeftoverObjects(bucket, environment.retry, environment.clock.time);
  }

  checkKey(key: string): void {
    this.bucket.checkName(key);
  }

  checkLeaseMs(leaseMs: number): void {
    if (!Number.isFinite(leaseMs)) return;
    const settle = this.settleMs + this.clock.toleranceMs;
    if (leaseMs < 3 * settle) {
      throw new LockConfigError(
        `leaseMs (${leaseMs} ms) is too short for the S3 list strategy: an acquisition waits settleMs + clock.toleranceMs (${settle} ms) before it knows it holds the lock, so the lease must be at least three times that (${3 * settle} ms). Use a longer lease or a smaller settleMs.`,
      );
    }
  }

  checkData(): void {
    throw new LockConfigError(LIST_DATA_REFUSED);
  }

  checkLimit(limit: number): void {
    if (limit === 1) return;
    throw new LockConfigError(
      `limit ${limit} is not available with the S3 list strategy: a semaphore keeps every holder in one record, which needs compare-and-swap. Use s3Store (S3 with conditional writes) or dynamoStore, or leave limit at 1.`,
    );
  }

  holds(lease: LeaseState, current: VersionedRecord | null): boolean {
    return current !== null && lease.writeIds.has(current.record.writeId);
  }

  checkResume(): void {
    throw new LockConfigError(
      'resume(handle) is not available with the S3 list strategy: without compare-and-swap nothing stops the first process from renewing the same lease, so both would believe they hold it. Release by handle (locks.release(key, handle)) and acquire again, or use s3Store (S3 with conditional writes) or dynamoStore.',
    );
  }

  async read(key: string, signal?: AbortSignal): Promise<VersionedRecord | null> {
    // The holder may delete its object between our list and our read: list again then.
    for (let attempt = 0; attempt < 3; attempt++) {
      const first = (await this.listContenders(key, signal)).live[0];
      if (!first) return null;
      const record = await this.records.recordOf(key, first, signal);
      if (record) return record;
    }
    return null;
  }

  checkList(): void {
    // Listing objects is what this strategy does anyway.
  }

  /**
   * Every lock with an object under `prefix`, as `read` shows it: the first live contender, or
   * free (null) when its objects have all expired. One listing of the prefix, then the body of
   * each holder (fetched once per contender and kept), at most LIST_READS_AT_ONCE at a time.
   */
  async *list(prefix: string, signal?: AbortSignal): AsyncIterable<ListedLock> {
    const locks = await this.records.listUnder(prefix, signal);
    for (const { key, listing } of locks) await this.deleteLeftOut(key, listing);
    yield* mapInOrder(locks, LIST_READS_AT_ONCE, async ({ key, listing }): Promise<ListedLock> => {
      const first = listing.live[0];
      if (!first) return { key, current: null };
      signal?.throwIfAborted();
      try {
        // Released between the listing and this read: list the lock again, as `read` does.
        const current = (await this.records.recordOf(key, first, signal)) ?? (await this.read(key, signal));
        return { key, current };
      } catch (error) {
        if (error instanceof LockCorruptedError) return { key, error };
        throw error;
      }
    });
  }

  msUntilClaimable(_key: string, current: VersionedRecord | null): number | undefined {
    const holder = current?.record.holder;
    if (!holder) return 0;
    if (holder.expiresAt === null) return undefined;
    return Math.max(0, holder.expiresAt + this.clock.toleranceMs - this.clock.time.now());
  }

  async claim(key: string, contender: Contender, signal?: AbortSignal): Promise<ClaimResult> {
    await this.leftovers.deleteAll(key);
    const { leaseMs, context } = contender.terms;
    const finite = Number.isFinite(leaseMs);
    // Object names carry whole milliseconds; a lease never ends earlier than asked.
    const created = Math.floor(this.clock.time.now());
    const uuid = this.clock.time.randomId();
    const objectKey = entryKey(key, created, uuid, finite ? created + Math.ceil(leaseMs) : null);
    const body: ContenderBody = {
      owner: this.owner,
      context,
      acquiredAt: created,
      renewedAt: created,
      leaseMs: finite ? leaseMs : null,
    };
    let held = false;
    /** The upload's answer never came: it may land at any time, also after we deleted it. */
    let unsure = false;
    try {
      const sentAt = this.clock.time.monotonic();
      contender.firstSentAt ??= sentAt;
      await withRetry(
        this.retry,
        this.clock.time,
        () => this.bucket.put(objectKey, encodeContenderBody(body)),
        signal,
      ).catch((error: unknown) => {
        unsure = mayHaveLanded(error);
        throw error;
      });
      // Too slow: contenders that listed meanwhile decided without our object. Withdraw.
      if (this.clock.time.now() > created + this.settleMs) return { lease: null, current: null };
      const settledAt = created + this.settleMs + this.clock.toleranceMs;
      const wait = settledAt - this.clock.time.now() + 1;
      if (wait > 0) await sleep(this.clock.time, wait, signal, { keepAlive: true });
      const listing = await this.listContenders(key, signal);
      const mine = listing.live.find((c) => c.created === created && c.uuid === uuid);
      if (mine && holdsFirstPlace(listing.live, mine)) {
        held = true;
        this.records.remember(mine, body);
        const record = toRecord(mine, body);
        // The record this engine shows carries the uuid as its write id: the lock recognises it as its own.
        return {
          lease: { key, lockId: uuid, version: objectKey, record, sentAt, writeIds: new Set([uuid]) },
        };
      }
      const holder = listing.live.find((c) => c !== mine);
      return { lease: null, current: holder ? await this.records.recordOf(key, holder, signal) : null };
    } finally {
      if (!held) {
        // A loser deletes its own object (also after an error or an abort), so it never blocks
        // others; withdrawn first, so that this attempt's object, should it land late, never
        // blocks this client either, and is deleted again meanwhile.
        this.withdrawn.withdraw(key, uuid, unsure ? [objectKey] : []);
        await this.leftovers.deleteQuietly(key, [objectKey]);
      }
    }
  }

  async renew(
    lease: LeaseState,
    leaseMs: number,
    data?: { value: unknown },
    signal?: AbortSignal,
  ): Promise<void> {
    // No checkLeaseMs here: a lease that is already held may be renewed for any length (the
    // release of a lock with lockAtLeastMs shortens it to what remains of the minimum hold).
    if (data) this.checkData();
    const { key } = lease;
    const holder = lease.record.holder!;
    const created = lease.record.token;
    const oldKey = lease.version;
    const now = Math.floor(this.clock.time.now());
    const finite = Number.isFinite(leaseMs);
    const expires = finite ? now + Math.ceil(leaseMs) : null;
    // Same created + uuid: the new object keeps our place in the queue; only the expiry moves.
    const newKey = entryKey(key, created, lease.lockId, expires);
    const body: ContenderBody = {
      owner: holder.owner,
      context: holder.context,
      acquiredAt: holder.acquiredAt,
      renewedAt: now,
      leaseMs: finite ? leaseMs : null,
    };
    const sentAt = this.clock.time.monotonic();
    try {
      await withRetry(
        this.retry,
        this.clock.time,
        () => this.bucket.put(newKey, encodeContenderBody(body)),
        signal,
      ).catch((error: unknown) => {
        // Its answer never came: should it land after the lease ended, it is deleted again then.
        if (mayHaveLanded(error)) this.unsureRenewal(key, lease.lockId, newKey);
        throw error;
      });
      // Landed after the old expiry: a contender may have ignored our object and taken the lock.
      if (holder.expiresAt !== null && this.clock.time.now() > holder.expiresAt) {
        throw new LockLostError(
          key,
          'the renewal landed after the lease had expired; another contender may have taken the lock meanwhile',
        );
      }
      const listing = await this.listContenders(key, signal);
      if (!listing.objectKeys.has(oldKey)) {
        throw new LockLostError(
          key,
          'its object was deleted by someone else (forceRelease, or a lifecycle rule that deletes live objects)',
        );
      }
      const mine = listing.live.find((c) => c.created === created && c.uuid === lease.lockId);
      if (!mine || !holdsFirstPlace(listing.live, mine)) {
        throw new LockLostError(key, await this.describeLoss(key, listing, mine));
      }
    } catch (error) {
      if (error instanceof LockLostError) {
        this.leaseOver(key, lease.lockId);
        await this.leftovers.deleteQuietly(key, [newKey, oldKey]);
      } else if (newKey !== oldKey) {
        this.leftovers.of(key).add(newKey); // may have landed; the old object still keeps our place
      }
      throw error;
    }
    if (newKey !== oldKey) await this.leftovers.deleteQuietly(key, [oldKey]);
    lease.version = newKey;
    lease.record = {
      ...lease.record,
      holder: { ...holder, renewedAt: now, leaseMs: body.leaseMs, expiresAt: expires },
    };
    lease.sentAt = sentAt;
    await this.leftovers.deleteAll(key, newKey);
  }

  async release(lease: LeaseState, data?: { value: unknown }, signal?: AbortSignal): Promise<void> {
    if (data) this.checkData();
    const { key } = lease;
    const listing = await this.listContenders(key, signal);
    const group = listing.all.find((c) => c.created === lease.record.token && c.uuid === lease.lockId);
    const mine = listing.live.find((c) => c === group);
    const keptUntilNow =
      listing.objectKeys.has(lease.version) && mine !== undefined && holdsFirstPlace(listing.live, mine);
    const loss = keptUntilNow ? undefined : await this.describeLoss(key, listing, mine, lease.version);
    const ours = new Set([lease.version, ...(group?.objectKeys ?? []), ...this.leftovers.of(key)]);
    for (const objectKey of ours) {
      await withRetry(this.retry, this.clock.time, () => this.bucket.delete(objectKey), signal);
      this.leftovers.of(key).delete(objectKey);
    }
    this.leaseOver(key, lease.lockId);
    if (loss) throw new LockLostError(key, loss);
  }

  /**
   * The lock of `lease` ended, however (the client tells every end). Released, or lost by a
   * renewal of ours, the lease is over already. Otherwise (forceRelease, the clock, a read that
   * showed another holder) its unsure renewals may still land, and its object may still be in
   * the bucket: it is withdrawn, so that its uploads are swept and block nobody.
   */
  leaseEnded(lease: LeaseState): void {
    if (this.withdrawn.has(lease.lockId)) return;
    // A fail-closed object would block the key for ever: swept too (in the background, so
    // that a forceRelease that ended the lock still finds it). A finite one runs out, as a
    // crashed holder's does.
    if (parseEntry(lease.key, lease.version)?.expires === null) {
      this.unsureRenewal(lease.key, lease.lockId, lease.version);
    }
    this.leaseOver(lease.key, lease.lockId);
  }

  /**
   * Gives back an acquisition nobody waits for: a lease won that the client did not trust, or
   * a lock that ended while one of its uploads had no answer. Each of its contenders (its uuid
   * is the lease's lock id and write id) is withdrawn, every object of it deleted now (any
   * expiry: an unsure renewal that landed too), and an upload still on its way swept later.
   * The client settles only leases no lock of it uses (this strategy passes none on locally).
   */
  async settleAbandoned(key: string, contender: Contender, signal?: AbortSignal): Promise<boolean> {
    const uuids = new Set([
      contender.lockId,
      ...(contender.writeIds ?? []),
      ...(contender.settlingWriteIds ?? []),
    ]);
    for (const uuid of uuids) this.leaseOver(key, uuid);
    // Withdrawn first: the listing leaves their objects out, as nobody's, whatever else it holds.
    const { leftOut } = await this.records.list(key, signal);
    const theirs = leftOut.filter((objectKey) => uuids.has(parseEntry(key, objectKey)?.uuid ?? ''));
    for (const objectKey of theirs) {
      await withRetry(this.retry, this.clock.time, () => this.bucket.delete(objectKey), signal);
      this.leftovers.of(key).delete(objectKey);
    }
    return theirs.length > 0;
  }

  /** A lease of ours ended (released or lost): its objects are nobody's, and its unsure renewals may still land. */
  private leaseOver(key: string, lockId: string): void {
    this.withdrawn.withdraw(key, lockId, this.unsureRenewals.get(lockId) ?? []);
    this.unsureRenewals.delete(lockId);
  }

  /** A renewal upload of `lockId` had no answer; once its lease is over, it is swept like the others. */
  private unsureRenewal(key: string, lockId: string, objectKey: string): void {
    let set = this.unsureRenewals.get(lockId);
    if (!set) {
      set = new Set();
      this.unsureRenewals.set(lockId, set);
    }
    set.add(objectKey);
    // Sent before its lock ended, answered after: the lease is over already.
    if (this.withdrawn.has(lockId)) this.leaseOver(key, lockId);
  }

  /** Lists the contenders of `key`, deleting objects of our own contenders that are over (left out of the listing). */
  private async listContenders(key: string, signal?: AbortSignal): Promise<Listing> {
    const listing = await this.records.list(key, signal);
    await this.deleteLeftOut(key, listing);
    return listing;
  }

  private async deleteLeftOut(key: string, listing: Listing): Promise<void> {
    if (listing.leftOut.length > 0) await this.leftovers.deleteQuietly(key, listing.leftOut);
  }

  newLease(request: LeaseRequest): ListLease {
    return new ListLease(this, request);
  }

  beforeClaim(): undefined {
    // Nothing to check first: the strategy's store check is verifyStore's.
    return undefined;
  }

  checkHeld(): void {
    // Only plain locks: nothing held here can be of another limit.
  }

  resume(): Promise<ResumedLease> {
    return Promise.reject(new Error('unreachable: checkResume() refuses a resume first'));
  }

  async releaseByHandle(
    key: string,
    lockId: string,
    _token: number,
    data?: { value: unknown },
  ): Promise<void> {
    if (data) this.checkData();
    const lease = await this.leaseFromHandle(key, lockId);
    try {
      await this.release(lease);
    } catch (error) {
      // A loss that may have stored the data says so; otherwise nothing was written.
      if (error instanceof LockLostError && !error.maybeApplied)
        throw new LockNotHeldError(key, error.message);
      throw error;
    }
  }

  async leaseFromHandle(key: string, lockId: string): Promise<LeaseState> {
    const listing = await this.listContenders(key);
    const group = listing.all.find((c) => c.uuid === lockId);
    const record = group ? await this.records.recordOf(key, group) : null;
    if (!group || !record) {
      // Released objects are deleted, and so are expired ones: the two cannot be told apart.
      throw new LockNotHeldError(key, 'this acquisition is gone: it was already released, or it expired');
    }
    return {
      key,
      lockId,
      version: latestObjectKey(group),
      record: record.record,
      sentAt: this.clock.time.monotonic(),
      writeIds: new Set([lockId]),
    };
  }

  async forceRelease(key: string): Promise<ReadonlySet<string> | null> {
    const listing = await this.records.list(key);
    // Objects of our own leases that are over (this client ends its locks of the key before
    // it frees it): ours to delete, and what holds the key when nothing else does.
    const ownEnded = this.liveUuids(key, listing.leftOut);
    for (const objectKey of listing.leftOut) {
      await withRetry(this.retry, this.clock.time, () => this.bucket.delete(objectKey));
      this.leftovers.of(key).delete(objectKey);
    }
    // Held by an ended lease of ours: deleting it freed the key. The contender behind it is not
    // the holder (maybe another client's claim that finds ours gone and holds): left alone.
    const holder = this.holderWithOurs(key, listing);
    if (holder && ownEnded.has(holder.uuid)) return ownEnded;
    const first = listing.live[0];
    if (!first) return ownEnded.size > 0 ? ownEnded : null;
    const freed: ReadonlySet<string> = new Set([first.uuid]);
    // The holder may upload a renewal (same created + uuid, new expiry) while we delete: list
    // again until none of its objects is left, so it cannot go on holding the lock.
    for (let round = 0; round < 5; round++) {
      const group =
        round === 0 ? first : (await this.listContenders(key)).all.find((c) => sameContender(c, first));
      if (!group) return freed;
      for (const objectKey of group.objectKeys) {
        await withRetry(this.retry, this.clock.time, () => this.bucket.delete(objectKey));
      }
    }
    throw new LockStoreError(`forceRelease("${key}") kept finding new objects of the holder; try again.`, {
      retryable: true,
      reason: 'throttled',
    });
  }

  /** Who holds `key` as listed, our own ended leases (left out of `listing.live`) counted too. */
  private holderWithOurs(key: string, listing: Listing): ListContender | undefined {
    const entries = [...listing.objectKeys]
      .map((objectKey) => parseEntry(key, objectKey))
      .filter((entry) => entry !== undefined);
    const now = this.clock.time.now();
    return contendersInOrder(entries).find((c) => isLive(c, now, this.clock.toleranceMs));
  }

  /** The contenders of the live objects among `objectKeys` (not expired on any clock). */
  private liveUuids(key: string, objectKeys: string[]): Set<string> {
    const now = this.clock.time.now();
    const uuids = new Set<string>();
    for (const objectKey of objectKeys) {
      const entry = parseEntry(key, objectKey);
      if (entry && (entry.expires === null || entry.expires + this.clock.toleranceMs >= now))
        uuids.add(entry.uuid);
    }
    return uuids;
  }

  /** Why a lease is no longer ours, naming who sorts first now when we can tell. */
  private async describeLoss(
    key: string,
    listing: Listing,
    mine: ListContender | undefined,
    ownKey?: string,
  ): Promise<string> {
    if (ownKey !== undefined && !listing.objectKeys.has(ownKey)) {
      return 'its object was deleted by someone else (forceRelease, or a lifecycle rule that deletes live objects)';
    }
    if (!mine)
      return 'its lease expired before it was renewed or released; another contender may have held the lock meanwhile';
    const ahead = listing.live.find((c) => c !== mine);
    const record = ahead ? await this.records.recordOf(key, ahead).catch(() => null) : null;
    const holder = record?.record.holder;
    const who = holder ? holderName(holder) : 'another contender';
    return `${who} now sorts first in the queue (an upload that landed late, or clocks that disagree by more than toleranceMs)`;
  }
}

/** An upload that failed this way may have been stored, or may still be (its answer never came). */
function mayHaveLanded(error: unknown): boolean {
  return !(error instanceof LockStoreError) || error.maybeApplied;
}

/** The first live contender holds the lock, unless another has the same `created` (no tie may share a token). */
function holdsFirstPlace(live: ListContender[], mine: ListContender): boolean {
  return live[0] === mine && live[1]?.created !== mine.created;
}

function sameContender(a: ListContender, b: ListContender): boolean {
  return a.created === b.created && a.uuid === b.uuid;
}
