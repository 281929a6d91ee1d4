import type { ResolvedClock } from './clock.js';
import { holderName, LockConfigError, LockLostError, LockNotHeldError, LockStoreError } from './errors.js';
import { KnownRecords } from './known-records.js';
import type { ClaimResult, Contender, LeaseEngine, LeaseState, LeaseTerms } from './lease-engine.js';
import type { LeaseHolder, LockRecord, VersionedRecord } from './record.js';
import { type RetryPolicy, withRetry } from './retry.js';
import type { LockStore, WriteCondition } from './store.js';
import { checkJsonData } from './validation.js';

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
      throw new LockNotHeldError(
        key,
        current?.record.holder ? 'another acquisition holds it now' : 'its lease already ended',
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

  async forceRelease(key: string): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.read(key);
      if (!current?.record.holder) return false;
      const record: LockRecord = {
        token: current.record.token,
        holder: null,
        writeId: this.clock.time.randomId(),
      };
      if (current.record.data !== undefined) record.data = current.record.data;
      const outcome = await this.store.write(key, record, { version: current.version });
      if (outcome.ok) return true;
    }
    throw new LockStoreError(`forceRelease("${key}") kept losing races with other writers; try again.`, {
      retryable: true,
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
    if (this.store.claim) return this.claimInOneRequest(key, contender, signal);
    const known = this.known.get(key);
    // Which request to start with: create when we have never seen the key (fresh keys are the
    // common case), replace when our own write is the last we know of, otherwise read first.
    let current: VersionedRecord | null | undefined;
    if (known === undefined) current = null;
    else if (known.lastWriter) current = known.current;
    for (let step = 0; step < 3; step++) {
      signal?.throwIfAborted();
      if (current === undefined) current = await this.read(key, signal);
      if (current?.record.holder?.lockId === contender.lockId)
        return { lease: this.adopt(key, current, contender) };
      if (!this.isClaimable(key, current)) return { lease: null, current };
      const holder = this.newHolder(contender.lockId, contender.terms);
      const record: LockRecord = {
        token: (current?.record.token ?? 0) + 1,
        holder,
        writeId: this.clock.time.randomId(),
      };
      if (current?.record.data !== undefined) record.data = current.record.data;
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
    const request =
      this.clock.mode === 'trusted'
        ? { record, expiredBefore: this.clock.time.now() - this.clock.toleranceMs }
        : {
            record,
            version: seen?.current && this.isClaimable(key, seen.current) ? seen.current.version : undefined,
          };
    const sentAt = this.clock.time.monotonic();
    contender.firstSentAt ??= sentAt;
    let outcome: Awaited<ReturnType<NonNullable<LockStore['claim']>>>;
    try {
      outcome = await withRetry(this.retry, this.clock.time, () => claim(key, request), signal);
    } catch (error) {
      if (!(error instanceof LockStoreError && error.maybeApplied)) throw error;
      const current = await this.read(key, signal);
      if (current?.record.holder?.lockId === contender.lockId)
        return { lease: this.adopt(key, current, contender) };
      return { lease: null, current };
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
    return { lease: null, current: outcome.current };
  }

  /** Renews (and optionally rewrites data of) a lease we hold. Throws LockLostError when it is no longer ours. */
  async renew(
    lease: LeaseState,
    leaseMs: number,
    data?: { value: unknown },
    signal?: AbortSignal,
  ): Promise<void> {
    const now = this.clock.time.now();
    const holder = lease.record.holder!;
    const finite = Number.isFinite(leaseMs);
    const record: LockRecord = {
      ...lease.record,
      holder: {
        ...holder,
        renewedAt: now,
        leaseMs: finite ? leaseMs : null,
        expiresAt: finite ? now + leaseMs : null,
      },
      writeId: this.clock.time.randomId(),
    };
    if (data) record.data = data.value;
    const sentAt = this.clock.time.monotonic();
    await this.writeOwn(lease, record, signal);
    lease.sentAt = sentAt;
  }

  /** Frees the lock, keeping the record (and its fencing token) so tokens never go back. */
  async release(lease: LeaseState, data?: { value: unknown }, signal?: AbortSignal): Promise<void> {
    const record: LockRecord = {
      token: lease.record.token,
      holder: null,
      writeId: this.clock.time.randomId(),
    };
    const kept = data ? data.value : lease.record.data;
    if (kept !== undefined) record.data = kept;
    await this.writeOwn(lease, record, signal);
  }

  /** Releases our lease straight to `next` in one conditional write (token + 1). */
  async handOver(
    lease: LeaseState,
    next: Contender,
    data?: { value: unknown },
    signal?: AbortSignal,
  ): Promise<LeaseState> {
    const holder = this.newHolder(next.lockId, next.terms);
    const record: LockRecord = { token: lease.record.token + 1, holder, writeId: this.clock.time.randomId() };
    const kept = data ? data.value : lease.record.data;
    if (kept !== undefined) record.data = kept;
    const sentAt = this.clock.time.monotonic();
    await this.writeOwn(lease, record, signal);
    return this.ownLease(lease.key, next.lockId, lease.version, record, sentAt, record.writeId);
  }

  /**
   * Writes a successor of our lease record. On a conflict, a record still carrying one of our
   * own write ids (a late-landing earlier write) is adopted and the write tried again; any
   * other record means the lease is gone.
   */
  private async writeOwn(lease: LeaseState, record: LockRecord, signal?: AbortSignal): Promise<void> {
    lease.writeIds.add(record.writeId);
    for (let attempt = 0; attempt < 3; attempt++) {
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
        this.trimWriteIds(lease);
        return;
      }
      const current = written.current === undefined ? await this.read(lease.key, signal) : written.current;
      const ours =
        current &&
        current.record.holder?.lockId === lease.lockId &&
        lease.writeIds.has(current.record.writeId);
      if (!ours) throw new LockLostError(lease.key, describeLoss(current));
      lease.version = current.version;
      lease.record = current.record;
    }
    throw new LockLostError(lease.key, 'the record kept changing under our own writes');
  }

  /** Takes over a lease whose record names our lockId (a write of ours landed after all). */
  private adopt(key: string, current: VersionedRecord, contender: Contender): LeaseState {
    return this.ownLease(
      key,
      contender.lockId,
      current.version,
      current.record,
      contender.firstSentAt ?? this.clock.time.monotonic(),
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

  /** Conditional write with retries; an ambiguous failure is settled by reading the record back. */
  private async writeResolved(
    key: string,
    record: LockRecord,
    condition: WriteCondition,
    isOurs: (found: LockRecord) => boolean,
    signal?: AbortSignal,
  ): Promise<{ ok: true; version: string } | { ok: false; current?: VersionedRecord | null }> {
    let unsure: unknown;
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
    const current = await this.read(key, signal);
    if (current && isOurs(current.record)) {
      this.known.remember(key, current, true, this.clock.time.monotonic());
      return { ok: true, version: current.version };
    }
    const unchanged =
      'absent' in condition ? current === null : current !== null && current.version === condition.version;
    // Nothing moved: the write was simply not applied. Report the failure itself, not a conflict.
    if (unchanged && unsure) throw unsure;
    return { ok: false, current };
  }

  private trimWriteIds(lease: LeaseState): void {
    if (lease.writeIds.size <= 16) return;
    const oldest = lease.writeIds.values().next().value;
    if (oldest !== undefined) lease.writeIds.delete(oldest);
  }
}

function describeLoss(current: VersionedRecord | null): string {
  if (!current) return 'its record was deleted';
  const holder = current.record.holder;
  if (!holder) return 'it was released by someone else (forceRelease or an expired takeover and release)';
  return `it is now held by ${holderName(holder)}`;
}
