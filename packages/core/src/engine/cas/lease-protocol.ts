import type { LeaseHolder, LockRecord, VersionedRecord } from '../../contract/lock-record.js';
import type { ClaimRequest, LockStore, WriteCondition } from '../../contract/lock-store.js';
import type { ResolvedClock } from '../../shared/clock.js';
import {
  holderName,
  LockConfigError,
  LockCorruptedError,
  LockLostError,
  LockNotHeldError,
  LockStoreError,
} from '../../shared/errors.js';
import { type RetryPolicy, withRetry } from '../../shared/retry.js';
import { checkJsonData } from '../../shared/validation.js';
import type { ClaimResult, Contender, LeaseEngine, LeaseState, LeaseTerms } from '../lease-engine.js';
import { KnownRecords } from './known-records.js';

/**
 * The lease protocol, written once over any LockStore: claim a free or expired record
 * (bumping the fencing token), renew by compare-and-swap, release to "free" keeping the
 * token, and hand a lease straight to another contender. Ambiguous write outcomes are
 * resolved by re-reading and recognising our own ids, never by assuming.
 */
export class LeaseProtocol implements LeaseEngine {
  readonly known = new KnownRecords();
  readonly kind: string;

  constructor(
    readonly store: LockStore,
    readonly clock: ResolvedClock,
    readonly retry: RetryPolicy,
    readonly owner: string,
  ) {
    this.kind = store.kind;
  }

  checkKey(key: string): void {
    this.store.checkKey(key);
  }

  checkLeaseMs(_leaseMs: number): void {
    // Any positive lease (or Infinity) works with compare-and-swap.
  }

  checkResume(): void {
    // Every write is conditional on the version read, so a lease can move to another client.
  }

  checkData(data: unknown, lease?: LeaseState): void {
    checkJsonData(data);
    // Without the record yet, the data alone already tells when it cannot fit: refuse before any read.
    const bytes = lease
      ? this.store.recordBytes({ ...lease.record, data })
      : Buffer.byteLength(JSON.stringify(data) ?? '', 'utf8');
    if (bytes > this.store.maxRecordBytes) {
      throw new LockConfigError(
        `Lock data makes the record${lease ? ` of "${lease.key}"` : ''} ${bytes} bytes${lease ? '' : ' or more'}; the ${this.store.kind} store allows at most ${this.store.maxRecordBytes}. Store large data elsewhere and keep a reference in the lock.`,
      );
    }
  }

  async leaseFromHandle(key: string, lockId: string): Promise<LeaseState> {
    const current = await this.read(key);
    const holder = current?.record.holder;
    if (!current || !holder || holder.lockId !== lockId) {
      // Say what the record shows: a release keeps the record (with its token) but frees it.
      throw new LockNotHeldError(
        key,
        !current
          ? 'this store has no record of the lock (it was never acquired here)'
          : holder
            ? 'another acquisition holds it now (this one ended and the lock was taken over)'
            : 'nobody holds it; it was already released',
      );
    }
    // An expired lease nobody took over can still be released or resumed: every write is
    // conditional on the version just read, so a takeover in between makes it fail safely.
    return {
      key,
      lockId,
      version: current.version,
      record: current.record,
      sentAt: this.clock.time.monotonic(),
      writeIds: new Set([current.record.writeId]),
    };
  }

  /**
   * Frees `key` whoever holds it, keeping its fencing token. A record that cannot be parsed is
   * replaced by a free one whose token starts above whatever token is still readable in it or
   * was seen here, so fencing never goes back. True when this call freed it.
   */
  async forceRelease(key: string): Promise<boolean> {
    const ours = new Set<string>();
    for (let attempt = 0; attempt < 5; attempt++) {
      let current: VersionedRecord | null;
      let version: string;
      let token: number;
      let data: unknown;
      let extensions: LockRecord['extensions'];
      try {
        current = await this.read(key);
        if (!current?.record.holder) return current !== null && ours.has(current.record.writeId);
        ({ version } = current);
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
      ours.add(record.writeId);
      const written = await this.writeResolved(
        key,
        record,
        { version },
        (found) => ours.has(found.writeId),
        undefined,
      );
      if (written.ok) return true;
    }
    throw new LockStoreError(`forceRelease("${key}") kept losing races with other writers; try again.`, {
      retryable: true,
      reason: 'throttled',
    });
  }

  newHolder(lockId: string, terms: LeaseTerms, acquiredAt?: number): LeaseHolder {
    const now = this.clock.time.now();
    const leaseMs = Number.isFinite(terms.leaseMs) ? terms.leaseMs : null;
    return {
      owner: this.owner,
      lockId,
      acquiredAt: acquiredAt ?? now,
      renewedAt: now,
      leaseMs,
      expiresAt: leaseMs === null ? null : now + leaseMs,
      context: terms.context,
    };
  }

  async read(key: string, signal?: AbortSignal): Promise<VersionedRecord | null> {
    const current = await withRetry(this.retry, this.clock.time, () => this.store.read(key), signal);
    this.known.remember(key, current, false, this.clock.time.monotonic());
    return current;
  }

  /** Whether a waiter may take this record over now, by the client's clock mode. */
  isClaimable(key: string, current: VersionedRecord | null): boolean {
    const holder = current?.record.holder;
    if (!holder) return true;
    if (holder.leaseMs === null) return false;
    if (this.clock.mode === 'trusted') {
      return holder.expiresAt !== null && holder.expiresAt + this.clock.toleranceMs < this.clock.time.now();
    }
    const seen = this.known.get(key);
    if (!seen || seen.current?.version !== current?.version) return false;
    return this.clock.time.monotonic() - seen.firstSeenAt >= holder.leaseMs + this.clock.toleranceMs;
  }

  /** Milliseconds until `current` may become claimable, if this client can tell; undefined otherwise. */
  msUntilClaimable(key: string, current: VersionedRecord | null): number | undefined {
    const holder = current?.record.holder;
    if (!holder) return 0;
    if (holder.leaseMs === null) return undefined;
    if (this.clock.mode === 'trusted') {
      if (holder.expiresAt === null) return undefined;
      return Math.max(0, holder.expiresAt + this.clock.toleranceMs - this.clock.time.now());
    }
    const seen = this.known.get(key);
    if (!seen || seen.current?.version !== current?.version) return holder.leaseMs + this.clock.toleranceMs;
    return Math.max(
      0,
      seen.firstSeenAt + holder.leaseMs + this.clock.toleranceMs - this.clock.time.monotonic(),
    );
  }

  /** One acquisition attempt: at most a few requests, never waits. */
  async claim(key: string, contender: Contender, signal?: AbortSignal): Promise<ClaimResult> {
    // The one-request claim's condition is a state, not a version: a request of it that lands
    // late may still apply much later. Fail-closed locks never expire, so they claim by version.
    if (this.store.claim && Number.isFinite(contender.terms.leaseMs)) {
      return this.claimInOneRequest(key, contender, signal);
    }
    return this.claimByVersion(key, contender, signal);
  }

  /** A claim as read + conditional write: what every store can do, and the only kind a later write of ours can fence off. */
  private async claimByVersion(
    key: string,
    contender: Contender,
    signal?: AbortSignal,
    readFirst = false,
  ): Promise<ClaimResult> {
    const known = this.known.get(key);
    // Which request to start with: create when we have never seen the key (fresh keys are the
    // common case), replace when our own write is the last we know of, otherwise read first.
    let current: VersionedRecord | null | undefined;
    if (readFirst) current = undefined;
    else if (known === undefined) current = null;
    else if (known.lastWriter) current = known.current;
    for (let step = 0; step < 3; step++) {
      signal?.throwIfAborted();
      if (current === undefined) current = await this.read(key, signal);
      if (current?.record.holder?.lockId === contender.lockId)
        return { lease: this.adopt(key, current, contender) };
      if (!this.isClaimable(key, current)) return { lease: null, current };
      const holder = this.newHolder(contender.lockId, contender.terms);
      const record: LockRecord = {
        token: this.nextToken(key, current),
        holder,
        writeId: this.clock.time.randomId(),
      };
      keepUnknownFields(record, current?.record);
      const condition: WriteCondition = current === null ? { absent: true } : { version: current.version };
      const sentAt = this.clock.time.monotonic();
      contender.firstSentAt ??= sentAt;
      const written = await this.writeResolved(
        key,
        record,
        condition,
        (found) => found.holder?.lockId === contender.lockId,
        signal,
      );
      if (written.ok) {
        // Recognised on a re-read, the record may be another attempt of this contender (a
        // settling claim racing the waiter's own): take it as found, timed from the first send.
        if (written.found && written.found.writeId !== record.writeId) {
          return { lease: this.adopt(key, { version: written.version, record: written.found }, contender) };
        }
        return {
          lease: this.ownLease(key, contender.lockId, written.version, record, sentAt, record.writeId),
        };
      }
      current = written.current;
      if (current?.record.holder?.lockId === contender.lockId)
        return { lease: this.adopt(key, current, contender) };
      if (current !== undefined && !this.isClaimable(key, current)) return { lease: null, current };
    }
    const latest = current === undefined ? await this.read(key, signal) : current;
    return { lease: null, current: latest };
  }

  private async claimInOneRequest(
    key: string,
    contender: Contender,
    signal?: AbortSignal,
  ): Promise<ClaimResult> {
    const claim = this.store.claim!.bind(this.store);
    const record: LockRecord = {
      token: 0,
      holder: this.newHolder(contender.lockId, contender.terms),
      writeId: this.clock.time.randomId(),
    };
    const seen = this.known.get(key);
    const tokenFloor = this.known.tokenFloor(key);
    const request: ClaimRequest =
      this.clock.mode === 'trusted'
        ? // The same instant as the holder's acquiredAt: a takeover never starts before the lease it ends.
          { record, expiredBefore: record.holder!.acquiredAt - this.clock.toleranceMs }
        : {
            record,
            version: seen?.current && this.isClaimable(key, seen.current) ? seen.current.version : undefined,
          };
    if (tokenFloor > 0) request.tokenFloor = tokenFloor;
    const sentAt = this.clock.time.monotonic();
    contender.firstSentAt ??= sentAt;
    let outcome: Awaited<ReturnType<NonNullable<LockStore['claim']>>>;
    try {
      outcome = await withRetry(this.retry, this.clock.time, () => claim(key, request), signal);
    } catch (error) {
      if (!(error instanceof LockStoreError && error.maybeApplied)) throw error;
      const current = await this.readAfterUnknownOutcome(key, error, signal);
      if (current?.record.holder?.lockId === contender.lockId)
        return { lease: this.adopt(key, current, contender) };
      // Not there now, but a request whose condition is a state may still land later: unknown.
      throw stillUnknown(key, error);
    }
    if (outcome.ok) {
      return {
        lease: this.ownLease(key, contender.lockId, outcome.version, outcome.record, sentAt, record.writeId),
      };
    }
    this.known.remember(key, outcome.current, false, this.clock.time.monotonic());
    if (outcome.current?.record.holder?.lockId === contender.lockId) {
      return { lease: this.adopt(key, outcome.current, contender) };
    }
    // A record older than a token this client saw (deleted and created again): claim by
    // version so the token goes on from the floor instead of back.
    if ((outcome.current?.record.token ?? 0) < tokenFloor && this.isClaimable(key, outcome.current)) {
      return this.claimByVersion(key, contender, signal);
    }
    if (outcome.maybeApplied) throw stillUnknown(key);
    return { lease: null, current: outcome.current };
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
    await this.writeOwn(
      lease,
      (base) => {
        const now = this.clock.time.now();
        sentAt = this.clock.time.monotonic();
        const record: LockRecord = {
          ...base,
          holder: {
            ...base.holder!,
            renewedAt: now,
            leaseMs: finite ? leaseMs : null,
            expiresAt: finite ? now + leaseMs : null,
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
    await this.writeOwn(
      lease,
      (base) => {
        const { holder: _holder, ...rest } = base;
        const record: LockRecord = { ...rest, holder: null, writeId: this.clock.time.randomId() };
        if (data) record.data = data.value;
        return record;
      },
      signal,
      // An earlier attempt of ours that freed the record already did what this one wants.
      (found) => found.holder === null,
    );
  }

  /** Releases our lease straight to `next` in one conditional write (token + 1). */
  async handOver(
    lease: LeaseState,
    next: Contender,
    data?: { value: unknown },
    signal?: AbortSignal,
  ): Promise<LeaseState> {
    // The write below names `next` as holder: should it land unseen, the waiter may adopt it
    // later, and must then count its lease from this send, not from the adoption.
    const sentAt = this.clock.time.monotonic();
    next.firstSentAt ??= sentAt;
    lease.handedTo ??= new Set();
    lease.handedTo.add(next.lockId);
    const { record, earlier } = await this.writeOwn(
      lease,
      (base) => {
        const record: LockRecord = {
          ...base,
          token: Math.max(base.token, this.known.tokenFloor(lease.key)) + 1,
          holder: this.newHolder(next.lockId, next.terms),
          writeId: this.clock.time.randomId(),
        };
        if (data) record.data = data.value;
        return record;
      },
      signal,
      (found) => found.holder?.lockId === next.lockId,
    );
    // Landed from an earlier attempt: its lease counts from that attempt's send at the latest.
    const leaseStart = earlier ? Math.min(sentAt, next.firstSentAt ?? Number.NEGATIVE_INFINITY) : sentAt;
    return this.ownLease(lease.key, next.lockId, lease.version, record, leaseStart, record.writeId);
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
    const result = await this.claimByVersion(key, { lockId: contender.lockId, terms }, signal, true);
    if (!result.lease) return false;
    await this.release(result.lease, undefined, signal);
    return true;
  }

  /**
   * Writes a successor of our lease record, built by `build` from the record as we last know
   * it. On a conflict, a record that carries one of our own write ids is an earlier write of
   * ours that landed unseen: when `done` says it already did what this write wants, that is
   * the result; otherwise, if it still names our lease, it is adopted and the successor built
   * again from it (so data it stored is kept). Any other record means the lease is gone.
   */
  private async writeOwn(
    lease: LeaseState,
    build: (base: LockRecord) => LockRecord,
    signal?: AbortSignal,
    done?: (found: LockRecord) => boolean,
  ): Promise<{ record: LockRecord; earlier: boolean }> {
    let unsure = false;
    for (let attempt = 0; attempt < 3; attempt++) {
      const record = build(lease.record);
      lease.writeIds.add(record.writeId);
      this.trimWriteIds(lease);
      const written = await this.writeResolved(
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
      const current = written.current === undefined ? await this.read(lease.key, signal) : written.current;
      const ourWrite = current !== null && lease.writeIds.has(current.record.writeId);
      if (ourWrite && done?.(current.record)) {
        lease.version = current.version;
        lease.record = current.record;
        return { record: current.record, earlier: true };
      }
      const holderId = current?.record.holder?.lockId;
      // (Releases and hand-overs only.) Our own hand-over that landed unseen, to a waiter that
      // is not the one this write is for:
      // that waiter left (it is never given a lock while this lease is being written), so the
      // record is still ours to release or hand on.
      const ownHandOver =
        done !== undefined && holderId !== undefined && lease.handedTo?.has(holderId) === true;
      if (!ourWrite || (holderId !== lease.lockId && !ownHandOver)) {
        throw new LockLostError(lease.key, describeLoss(current, ourWrite), { maybeApplied: unsure });
      }
      lease.version = current.version;
      lease.record = current.record;
    }
    throw new LockLostError(lease.key, 'the record kept changing under our own writes', {
      maybeApplied: unsure,
    });
  }

  /** Takes over a lease whose record names our lockId (a write of ours landed after all). */
  private adopt(key: string, current: VersionedRecord, contender: Contender): LeaseState {
    return this.ownLease(
      key,
      contender.lockId,
      current.version,
      current.record,
      // A lease whose first write cannot be dated is never trusted (settling only releases it).
      contender.firstSentAt ?? Number.NEGATIVE_INFINITY,
      current.record.writeId,
    );
  }

  private ownLease(
    key: string,
    lockId: string,
    version: string,
    record: LockRecord,
    sentAt: number,
    writeId: string,
  ): LeaseState {
    this.known.remember(key, { version, record }, true, this.clock.time.monotonic());
    return { key, lockId, version, record, sentAt, writeIds: new Set([writeId]) };
  }

  /**
   * Conditional write with retries; an ambiguous failure is settled by reading the record back.
   * `unsure` on a failure: the write may have landed before the record moved on (it cannot
   * land any more). When the record has not moved, the write may still land later: that stays
   * an unknown outcome (a LockStoreError with maybeApplied), never a "not applied".
   */
  private async writeResolved(
    key: string,
    record: LockRecord,
    condition: WriteCondition,
    isOurs: (found: LockRecord) => boolean,
    signal?: AbortSignal,
  ): Promise<
    | { ok: true; version: string; found?: LockRecord }
    | { ok: false; current?: VersionedRecord | null; unsure?: boolean }
  > {
    let unsure: LockStoreError | undefined;
    try {
      const outcome = await withRetry(
        this.retry,
        this.clock.time,
        () => this.store.write(key, record, condition),
        signal,
      );
      if (outcome.ok) {
        this.known.remember(key, { version: outcome.version, record }, true, this.clock.time.monotonic());
        return outcome;
      }
      if (!outcome.maybeApplied) {
        if (outcome.current !== undefined)
          this.known.remember(key, outcome.current, false, this.clock.time.monotonic());
        return outcome.current === undefined ? { ok: false } : { ok: false, current: outcome.current };
      }
    } catch (error) {
      if (!(error instanceof LockStoreError && error.maybeApplied)) throw error;
      unsure = error;
    }
    // The request may or may not have been applied: look at the record to know.
    const current = await this.readAfterUnknownOutcome(key, unsure, signal);
    if (current && isOurs(current.record)) {
      this.known.remember(key, current, true, this.clock.time.monotonic());
      return { ok: true, version: current.version, found: current.record };
    }
    const unchanged =
      'absent' in condition ? current === null : current !== null && current.version === condition.version;
    if (unchanged) throw stillUnknown(key, unsure);
    return { ok: false, current, unsure: true };
  }

  /** Reads after a write of unknown outcome; a failed read leaves the outcome unknown, and says so. */
  private async readAfterUnknownOutcome(
    key: string,
    unsure: LockStoreError | undefined,
    signal?: AbortSignal,
  ): Promise<VersionedRecord | null> {
    try {
      return await this.read(key, signal);
    } catch (error) {
      if (error instanceof LockCorruptedError) throw error;
      throw stillUnknown(key, unsure ?? error, error);
    }
  }

  /** The token a new acquisition takes: above the record's and above any this client has seen for the key. */
  private nextToken(key: string, current: VersionedRecord | null): number {
    return Math.max(current?.record.token ?? 0, this.known.tokenFloor(key)) + 1;
  }

  private trimWriteIds(lease: LeaseState): void {
    if (lease.writeIds.size <= 16) return;
    const oldest = lease.writeIds.values().next().value;
    if (oldest !== undefined) lease.writeIds.delete(oldest);
  }
}

/** Lease of the claim that fences off an abandoned fail-closed acquisition, before it is released. */
const SETTLE_LEASE_MS = 60_000;

function describeLoss(current: VersionedRecord | null, ourWrite: boolean): string {
  if (!current) return 'its record was deleted';
  const holder = current.record.holder;
  if (ourWrite) return 'an earlier write of this lock landed unseen and gave it away';
  if (!holder)
    return 'it was released by someone else (forceRelease, a release by handle, or an expired takeover and release)';
  return `it is now held by ${holderName(holder)}`;
}

/** A write whose outcome stays unknown: it may have been applied, or may still be. */
function stillUnknown(key: string, cause?: unknown, readError?: unknown): LockStoreError {
  const why = readError
    ? 'and reading the record back failed too'
    : 'and the record shows no sign of it yet, so it may still land';
  const failure = readError ?? cause;
  return new LockStoreError(
    `A write to lock "${key}" may or may not have been applied (${cause instanceof Error ? cause.message : 'no answer'}) ${why}. Latch treats the outcome as unknown and acts on the safe side.`,
    {
      cause: failure,
      retryable: true,
      maybeApplied: true,
      // Whatever made the write's outcome unknown (or the read-back fail) is the failure to report.
      reason: failure instanceof LockStoreError ? failure.reason : 'unavailable',
    },
  );
}

/** Keeps what a new record inherits from the one it replaces: data and fields a newer Latch wrote. */
function keepUnknownFields(record: LockRecord, previous: LockRecord | undefined): void {
  if (previous?.data !== undefined) record.data = previous.data;
  if (previous?.extensions !== undefined) record.extensions = previous.extensions;
}
