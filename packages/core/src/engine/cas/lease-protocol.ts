import { holderToken, type LockRecord, type VersionedRecord } from '../../contract/lock-record.js';
import type { LockStore } from '../../contract/lock-store.js';
import type { ResolvedClock } from '../../shared/clock.js';
import {
  LockConfigError,
  LockCorruptedError,
  LockLostError,
  LockNotHeldError,
  LockStoreError,
  passedOnError,
} from '../../shared/errors.js';
import { type RetryPolicy, withRetry } from '../../shared/retry.js';
import { checkJsonData } from '../../shared/validation.js';
import type {
  ClaimResult,
  Contender,
  LeaseEngine,
  LeaseState,
  LeaseTerms,
  ListedLock,
} from '../lease-engine.js';
import type { CasParts } from './cas-parts.js';
import { claimByVersion, claimInOneRequest } from './claim.js';
import { msUntilClaimable } from './claimable.js';
import { KnownRecords } from './known-records.js';
import { checkStoreLists, listRecords } from './list-records.js';
import { passLeaseLocally, RESERVED_TOKENS, topUpReserve } from './local-pass.js';
import { leaseFromRecord, newHolder, ownLease } from './own-lease.js';
import { storesData, writeOwn } from './own-write.js';
import { writeResolved } from './resolved-write.js';
import { claimSlot, slotLease } from './slot-claim.js';
import { liveSlots, msUntilSlotFree, type SlotParts, SlotSightings } from './slot-claimable.js';
import { checkSameLimit, holdersOf, isSemaphore, limitOf, semaphoreRecord, slotOf } from './slot-records.js';
import { writeOwnSlot } from './slot-write.js';
import type { StoreCheck } from './store-check.js';
import { storedExpiry } from './stored-expiry.js';

/**
 * The lease protocol, written once over any LockStore: claim a free or expired record
 * (bumping the fencing token), renew by compare-and-swap, release to "free" keeping the
 * token, and hand a lease straight to another contender. Ambiguous write outcomes are
 * resolved by re-reading and recognising our own ids, never by assuming. A semaphore (limit > 1)
 * is the same record with every holder in it: its operations are in the slot-*.ts files.
 */
export class LeaseProtocol implements LeaseEngine, CasParts, SlotParts {
  readonly known = new KnownRecords();
  readonly sightings = new SlotSightings();
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

  checkData(data: unknown, lease?: LeaseState): void {
    checkJsonData(data);
    // Without the record yet, the data alone already tells when it cannot fit: refuse before any read.
    const bytes = lease
      ? this.store.recordBytes({ ...(lease.shared ?? lease.record), data })
      : Buffer.byteLength(JSON.stringify(data) ?? '', 'utf8');
    if (bytes > this.store.maxRecordBytes) {
      throw new LockConfigError(
        `Lock data makes the record${lease ? ` of "${lease.key}"` : ''} ${bytes} bytes${lease ? '' : ' or more'}; the ${this.store.kind} store allows at most ${this.store.maxRecordBytes}. Store large data elsewhere and keep a reference in the lock.`,
      );
    }
  }

  async leaseFromHandle(key: string, lockId: string, token?: number): Promise<LeaseState> {
    const current = await this.read(key);
    const slot = slotOf(current?.record, lockId);
    if (current && slot)
      return slotLease(key, lockId, current.version, current.record, this.clock.time.monotonic());
    const holder = isSemaphore(current?.record) ? undefined : current?.record.holder;
    if (!current || !holder || holder.lockId !== lockId) {
      // Say what the record shows: a release keeps the record (with its token) but frees it.
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
    const stored = holderToken(current.record);
    if (token !== undefined && stored > token) {
      throw passedOnError(key);
    }
    // The handle's own holder may be newer than the record shows (passed to it without a
    // write): whoever takes the lease over writes the handle's token.
    const record =
      token !== undefined && token > stored && token <= current.record.token
        ? { ...current.record, holder: { ...holder, token } }
        : current.record;
    // An expired lease nobody took over can still be released or resumed: every write is
    // conditional on the version just read, so a takeover in between makes it fail safely.
    return leaseFromRecord(key, lockId, current, this.clock.time.monotonic(), record);
  }

  passLocally(lease: LeaseState, terms: LeaseTerms): boolean {
    // A record read since shows a token above the lease's reserve: another client took the key
    // (an early takeover): hand over with a write, which learns so, not with none.
    if (this.known.tokenFloor(lease.key) > lease.record.token) return false;
    return passLeaseLocally(lease, terms, this.clock.time.now());
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
    return current;
  }

  /** Milliseconds until `current` may become claimable, if this client can tell; undefined otherwise. */
  msUntilClaimable(key: string, current: VersionedRecord | null): number | undefined {
    if (isSemaphore(current?.record)) return msUntilSlotFree(this, key, current);
    return msUntilClaimable(this, key, current);
  }

  holds(lease: LeaseState, current: VersionedRecord | null): boolean {
    if (!current) return false;
    if (!lease.shared) return lease.writeIds.has(current.record.writeId);
    const slot = slotOf(current.record, lease.lockId);
    return slot !== undefined && lease.writeIds.has(slot.writeId);
  }

  /** One acquisition attempt: at most a few requests, never waits. */
  async claim(key: string, contender: Contender, signal?: AbortSignal): Promise<ClaimResult> {
    if (this.storeCheck && !this.storeCheck.passed) await this.storeCheck.ensure(key);
    if ((contender.terms.limit ?? 1) > 1) return claimSlot(this, key, contender, signal);
    // The one-request claim's condition is a state, not a version: a request of it that lands
    // late may still apply much later. Fail-closed locks never expire, so they claim by version.
    const result =
      this.store.claim && Number.isFinite(contender.terms.leaseMs)
        ? await claimInOneRequest(this, key, contender, signal)
        : await claimByVersion(this, key, contender, signal);
    // Held as a semaphore: a plain lock beside its holders would exceed the limit they count.
    if (!result.lease && isSemaphore(result.current?.record)) {
      checkSameLimit(key, 1, result.current, liveSlots(this, key, result.current));
    }
    if (result.lease?.adopted) return this.fenceAdopted(result.lease, contender, signal);
    return result;
  }

  /**
   * A lease found in the store rather than written by this claim (an earlier claim of the same
   * acquisition that landed unseen) may still have writes of this client on their way to its
   * version. One renewal moves the version on, so none of them can land any more (resume does
   * the same).
   */
  private async fenceAdopted(
    lease: LeaseState,
    contender: Contender,
    signal?: AbortSignal,
  ): Promise<ClaimResult> {
    try {
      await this.renew(lease, contender.terms.leaseMs, undefined, signal);
    } catch (error) {
      // Moved on first (freed by that write, or taken over): not ours, and nothing of ours is left there.
      if (error instanceof LockLostError) return { lease: null, current: await this.read(lease.key, signal) };
      throw error;
    } finally {
      // The renewal is this acquisition's own write: should its answer be lost, its next claim
      // (or its settling) must still know the record it leaves as its own.
      for (const id of lease.writeIds) contender.writeIds?.add(id);
    }
    lease.adopted = false;
    return { lease };
  }

  /** Renews (and optionally rewrites data of) a lease we hold. Throws LockLostError when it is no longer ours. */
  async renew(
    lease: LeaseState,
    leaseMs: number,
    data?: { value: unknown },
    signal?: AbortSignal,
  ): Promise<void> {
    const finite = Number.isFinite(leaseMs);
    let sentAt = 0;
    if (lease.shared) {
      await writeOwnSlot(
        this,
        lease,
        (slot) => {
          const now = this.clock.time.now();
          sentAt = this.clock.time.monotonic();
          const renewed = {
            ...slot,
            renewedAt: now,
            leaseMs: finite ? leaseMs : null,
            expiresAt: storedExpiry(this.clock, now, finite ? leaseMs : null),
            writeId: this.clock.time.randomId(),
          };
          return { slot: renewed, data };
        },
        signal,
      );
      lease.sentAt = sentAt;
      return;
    }
    await writeOwn(
      this,
      lease,
      (base) => {
        const now = this.clock.time.now();
        sentAt = this.clock.time.monotonic();
        const record: LockRecord = {
          ...base,
          // While the lock passes among this client's callers, tokens stay reserved ahead of them.
          token: topUpReserve(base),
          holder: {
            ...base.holder!,
            renewedAt: now,
            leaseMs: finite ? leaseMs : null,
            expiresAt: storedExpiry(this.clock, now, finite ? leaseMs : null),
          },
          writeId: this.clock.time.randomId(),
        };
        if (data) record.data = data.value;
        return record;
      },
      signal,
    );
    lease.sentAt = sentAt;
  }

  /** Frees the lock, keeping the record (and its fencing token) so tokens never go back. */
  async release(lease: LeaseState, data?: { value: unknown }, signal?: AbortSignal): Promise<void> {
    if (lease.shared) {
      await writeOwnSlot(this, lease, () => ({ slot: null, data }), signal);
      return;
    }
    await writeOwn(
      this,
      lease,
      (base) => {
        const { holder: _holder, ...rest } = base;
        const record: LockRecord = { ...rest, holder: null, writeId: this.clock.time.randomId() };
        if (data) record.data = data.value;
        return record;
      },
      signal,
      // An earlier attempt of ours that freed the record (with this data) already did what this one wants.
      (found) => found.holder === null && storesData(found, data),
    );
  }

  /** Releases our lease straight to `next` in one conditional write (token + 1). */
  async handOver(
    lease: LeaseState,
    next: Contender,
    data?: { value: unknown },
    signal?: AbortSignal,
  ): Promise<LeaseState> {
    // The write below names `next` as holder: should it land unseen, a later attempt of this
    // hand-over finds it, and the waiter's lease counts from the first attempt's send.
    const sentAt = this.clock.time.monotonic();
    next.handOverSentAt ??= sentAt;
    // It is this lease's write, not the waiter's: a claim of the waiter still on its way must not
    // adopt it (its renewal would move the version under the lock this hand-over makes). Only
    // the handing lock settles it: by handing over again, or by giving it back.
    next.writeIds ??= new Set();
    lease.handedTo ??= new Set();
    lease.handedTo.add(next.lockId);
    const { record, earlier } = await writeOwn(
      this,
      lease,
      (base) => {
        const token = Math.max(base.token, this.known.tokenFloor(lease.key)) + 1;
        // Tokens above the waiter's are reserved: the lock can then pass on among this client's
        // callers with no write (passLocally).
        const record: LockRecord = {
          ...base,
          token: token + RESERVED_TOKENS - 1,
          holder: { ...newHolder(this, next.lockId, next.terms), token },
          writeId: this.clock.time.randomId(),
        };
        if (data) record.data = data.value;
        return record;
      },
      signal,
      (found) => found.holder?.lockId === next.lockId && storesData(found, data),
    );
    // Landed from an earlier attempt: its lease counts from that attempt's send at the latest.
    const leaseStart = earlier ? Math.min(sentAt, next.handOverSentAt) : sentAt;
    return ownLease(this, lease.key, next.lockId, lease.version, record, leaseStart, record.writeId);
  }

  /**
   * Gives back whatever an acquisition nobody waits for any more may hold: a claim whose
   * outcome was unknown, or a lease lost while a write of it was in flight. It claims the key
   * by version with the same lock id (adopting the lease if one of its writes landed) and
   * releases it. Once that claim is answered, no earlier write of the acquisition can land
   * any more: each was conditional on a version that has moved on.
   */
  async settleAbandoned(key: string, contender: Contender, signal?: AbortSignal): Promise<boolean> {
    // A fencing claim of a free key takes a finite lease: should its release fail, it ends by itself.
    const { leaseMs } = contender.terms;
    const terms = { ...contender.terms, leaseMs: Number.isFinite(leaseMs) ? leaseMs : SETTLE_LEASE_MS };
    const settling: Contender = { lockId: contender.lockId, terms };
    if (contender.writeIds) {
      // Not the acquisition's own set (a claim of it may still be running), but one kept across
      // settling's attempts, so that a retry recognises the claim an earlier attempt landed.
      contender.settlingWriteIds ??= new Set();
      for (const id of contender.writeIds) contender.settlingWriteIds.add(id);
      settling.writeIds = contender.settlingWriteIds;
    }
    // By what the record is now, whatever the acquisition asked for: a slot is settled as a slot.
    const current = await this.read(key, signal);
    if ((terms.limit ?? 1) > 1 || isSemaphore(current?.record)) {
      if (isSemaphore(current?.record)) terms.limit = limitOf(current.record);
      return this.settleSlot(key, settling, signal);
    }
    if (contender.handedTo) settling.handedTo = contender.handedTo;
    const result = await claimByVersion(this, key, settling, signal, true);
    if (!result.lease) return this.settleHandOver(key, settling, result.current, signal);
    await this.release(result.lease, undefined, signal);
    return true;
  }

  /**
   * A record held by a waiter this acquisition handed over to, written by that hand-over (a
   * write of ours, with an outcome unknown when it was sent): nobody else can fence it off, so
   * it is given back. Should the waiter claim it meanwhile, its renewal moves the version on
   * and this release fails (or this release lands first and the waiter's renewal fails).
   */
  private async settleHandOver(
    key: string,
    contender: Contender,
    current: VersionedRecord | null,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const holder = current?.record.holder;
    if (!current || !holder || !contender.handedTo?.has(holder.lockId)) return false;
    if (!contender.writeIds?.has(current.record.writeId)) return false;
    const lease = leaseFromRecord(key, holder.lockId, current, this.clock.time.monotonic());
    try {
      await this.release(lease, undefined, signal);
    } catch (error) {
      if (error instanceof LockLostError) return false; // moved on: the waiter has it, or someone else
      throw error;
    }
    return true;
  }

  /**
   * As settleAbandoned, for a semaphore slot: while the record is still at the version a claim
   * of ours was conditional on, a slot is free for us there too (leases only run out), so the
   * claim below writes, and moves the version on. Holders with another limit mean the record
   * has moved on already.
   */
  private async settleSlot(key: string, contender: Contender, signal?: AbortSignal): Promise<boolean> {
    let result: ClaimResult;
    try {
      result = await claimSlot(this, key, contender, signal, true);
    } catch (error) {
      if (error instanceof LockConfigError) return false;
      throw error;
    }
    if (!result.lease) {
      // Full now, though a clock that stepped back (or a forgotten sighting) may be why: move the
      // version on anyway, so that a claim of ours conditional on it can never land.
      await this.fenceSemaphore(key, result.current, signal);
      return false;
    }
    await this.release(result.lease, undefined, signal);
    return true;
  }

  /** Rewrites a semaphore record unchanged but for its write id (holders know their slots by theirs). */
  private async fenceSemaphore(
    key: string,
    current: VersionedRecord | null,
    signal?: AbortSignal,
  ): Promise<void> {
    if (!current || !isSemaphore(current.record)) return;
    const { record } = current;
    const fence = semaphoreRecord(
      record,
      limitOf(record),
      record.holders,
      record.token,
      this.clock.time.randomId(),
    );
    // A refused fence means the record moved on by itself, which is all the fence is for.
    await writeResolved(
      this,
      key,
      fence,
      { version: current.version },
      (found) => found.writeId === fence.writeId,
      signal,
    );
  }
}

/** Lease of the claim that fences off an abandoned fail-closed acquisition, before it is released. */
const SETTLE_LEASE_MS = 60_000;
