import { randomUUID } from 'node:crypto';
import type { LockRecord, VersionedRecord } from '../contract/lock-record.js';
import type { LockStore, WriteOutcome } from '../contract/lock-store.js';
import { type ClockMode, type ClockOptions, resolveClock } from '../shared/clock.js';
import { isUnknownOutcome, LockStoreError } from '../shared/errors.js';
import { readClock } from './clock-offset.js';
import type { StoreCheck, StoreVerdict } from './store-verdict.js';

/** Keys the probe writes start with this; it removes what it wrote. */
export const VERIFY_KEY_PREFIX = '__latch-verify__/';

/** The code of a store error that says the store lacks a feature the request uses (a 501). */
const UNSUPPORTED = 'LOCK_STORE_UNSUPPORTED';

/** How many create-if-absent writes race for one new key. */
const RACING_CREATES = 5;

export interface VerifyStoreOptions {
  /** The clock settings the clients use, to judge the measured offset (default: trusted, 0 ms tolerance). */
  clock?: ClockMode | ClockOptions;
}

/**
 * Checks, with a short probe under {@link VERIFY_KEY_PREFIX} that it cleans up, that `store`
 * does what Latch's locks rely on: exactly one of several racing create-if-absent writes wins, a
 * replace with a stale version is refused and one with the current version applies, every write
 * changes the version, a read sees the write before it, a one-request claim (DynamoDB) refuses a
 * held record; and how far the store's clock is from this one. About a dozen requests.
 * A store error that is an outage (network, throttling) is thrown, not judged.
 */
export async function verifyLockStore(
  store: LockStore,
  options: VerifyStoreOptions = {},
  reached = false,
): Promise<StoreVerdict> {
  const clock = resolveClock(options.clock);
  const key = `${VERIFY_KEY_PREFIX}${randomUUID()}`;
  store.checkKey(key);
  const counted = countingStore(store);
  const probe = new Probe(counted.store, key, reached);
  const checks = await probe.run();
  const clockReading = await readClock(counted.store, key, clock).finally(() => probe.cleanUp());
  return {
    store: store.kind,
    safe: checks.every((check) => !check.safety || check.outcome === 'passed' || check.outcome === 'skipped'),
    checks,
    clock: clockReading,
    requests: counted.requests(),
  };
}

/** The probe's steps, in order; each later step builds on the records the earlier ones left. */
class Probe {
  readonly #checks: StoreCheck[] = [];

  constructor(
    private readonly store: LockStore,
    private readonly key: string,
    /** True when the caller has just read from the store (a client, the key it is about to claim). */
    private readonly reached: boolean,
  ) {}

  async run(): Promise<StoreCheck[]> {
    // One read first: a store that cannot be reached (or has no such bucket or table) fails here,
    // after one request.
    if (!this.reached) await this.store.read(this.key);
    const created = await this.createOnce();
    if (created) {
      await this.readAfterWrite(created);
      if (await this.replaceCurrent(created)) {
        await this.replaceStale(created);
        await this.deleteStale(created);
      }
    } else {
      for (const name of ['read-after-write', 'replace-current', 'replace-stale', 'delete-stale'])
        this.skip(name, 'the record could not be created');
    }
    await this.claimOnce();
    return this.#checks;
  }

  /** Removes what the probe wrote, when it is still there; never throws (the probe's verdict stands). */
  async cleanUp(): Promise<void> {
    for (const key of [this.key, `${this.key}/claim`]) {
      try {
        const current = await this.store.read(key);
        if (current) await this.store.delete(key, current.version);
      } catch {
        // Left behind: it is under the probe's prefix and holds no lock.
      }
    }
  }

  private async createOnce(): Promise<VersionedRecord | undefined> {
    const name = 'create-once';
    const records = Array.from({ length: RACING_CREATES }, () => probeRecord(1));
    const outcomes = await Promise.allSettled(
      records.map((record) => this.store.write(this.key, record, { absent: true })),
    );
    const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    const unsupported = errors.find((error) => error instanceof LockStoreError && error.code === UNSUPPORTED);
    if (unsupported) {
      this.refuse(name, unsupported, 'a create-if-absent write');
      return undefined;
    }
    // S3 may answer 409 to writes that overlap (a retryable error, not applied): they lost the race.
    const lost = (error: unknown) =>
      error instanceof LockStoreError && error.retryable && !error.maybeApplied;
    const other = errors.find((error) => !lost(error) && !isUnknownOutcome(error));
    if (other !== undefined || errors.length === outcomes.length) throw other ?? errors[0];
    const won = outcomes.flatMap((o, i) =>
      o.status === 'fulfilled' && o.value.ok ? [{ version: o.value.version, record: records[i]! }] : [],
    );
    // A write whose outcome is unknown may have applied too: only two certain winners condemn the store.
    const unsure =
      errors.some(isUnknownOutcome) ||
      outcomes.some((o) => o.status === 'fulfilled' && !o.value.ok && o.value.maybeApplied);
    if (unsure && won.length < 2) throw outcomeUnknown(name);
    if (won.length !== 1) {
      this.fail(
        name,
        won.length === 0
          ? `none of ${RACING_CREATES} racing create-if-absent writes on a new key applied.`
          : `${won.length} of ${RACING_CREATES} racing create-if-absent writes on one new key all applied: the store ignores If-None-Match (or its equivalent), so two clients could both create a lock record and both hold the lock.`,
      );
      return undefined;
    }
    this.pass(name, `exactly one of ${RACING_CREATES} racing create-if-absent writes applied.`);
    return won[0];
  }

  private async readAfterWrite(created: VersionedRecord): Promise<void> {
    const read = await this.store.read(this.key);
    if (read?.version === created.version && read.record.writeId === created.record.writeId) {
      this.pass('read-after-write', 'a read right after a write saw it.');
      return;
    }
    this.fail(
      'read-after-write',
      `a read right after a write saw ${read ? 'an older version' : 'no record'}: reads lag behind writes, so a client could judge a lock by a state that is gone. Turn on the store's strongly consistent reads, if it has them.`,
    );
  }

  /** True when the replace applied: the record moved on from `created`, which is stale from then on. */
  private async replaceCurrent(created: VersionedRecord): Promise<boolean> {
    const record = probeRecord(2);
    const outcome = await this.attempt('replace-current', () =>
      this.store.write(this.key, record, { version: created.version }),
    );
    if (!outcome) return false;
    if (!outcome.ok && outcome.maybeApplied) throw outcomeUnknown('replace-current');
    if (!outcome.ok) {
      this.fail('replace-current', 'a replace conditional on the version just written was refused.');
      return false;
    }
    if (outcome.version === created.version) {
      this.fail(
        'version-changes',
        'a write of different content kept the same version (ETag): a stale writer could not be told from the current one.',
      );
    } else {
      this.pass('version-changes', 'each write produced a new version.');
    }
    this.pass('replace-current', 'a replace conditional on the current version applied.');
    return true;
  }

  private async replaceStale(created: VersionedRecord): Promise<void> {
    const stale = probeRecord(3);
    const outcome = await this.attempt('replace-stale', () =>
      this.store.write(this.key, stale, { version: created.version }),
    );
    if (!outcome) return;
    // Refused, perhaps after an earlier attempt of it: the record tells whether that one applied.
    const applied =
      outcome.ok ||
      (outcome.maybeApplied && (await this.store.read(this.key))?.record.writeId === stale.writeId);
    if (applied) {
      this.fail(
        'replace-stale',
        'a replace conditional on a version that was no longer current applied: the store ignores If-Match (or its equivalent), so a client whose lease was taken over could overwrite the new holder.',
      );
      return;
    }
    this.pass('replace-stale', 'a replace conditional on a stale version was refused.');
  }

  /** Latch never deletes a lock record, so this one is told but does not make the store unsafe. */
  private async deleteStale(created: VersionedRecord): Promise<void> {
    let outcome: WriteOutcome;
    try {
      outcome = await this.store.delete(this.key, created.version);
    } catch (error) {
      // Locks need no delete permission (the minimal IAM policy has none): not a verdict.
      if (error instanceof LockStoreError && error.reason === 'denied') {
        this.skip('delete-stale', 'deleting is not allowed to these credentials, which locks do not need.');
      } else {
        this.refuse('delete-stale', error, 'the request', false);
      }
      return;
    }
    // Refused, perhaps after an earlier attempt of it: the record is gone when that one applied.
    const applied = outcome.ok || (outcome.maybeApplied && (await this.store.read(this.key)) === null);
    if (applied) {
      this.fail(
        'delete-stale',
        'a delete conditional on a stale version removed the record: the store ignores If-Match on delete. Latch does not delete lock records, so its locks are not affected.',
        false,
      );
      return;
    }
    this.pass('delete-stale', 'a delete conditional on a stale version was refused.', false);
  }

  /** DynamoDB's one-request claim: it must apply on a free key and be refused on a held one. */
  private async claimOnce(): Promise<void> {
    const claim = this.store.claim?.bind(this.store);
    if (!claim) {
      this.skip('claim-once', 'the store has no one-request claim.');
      return;
    }
    const key = `${this.key}/claim`;
    const now = Date.now();
    const held = (lockId: string): LockRecord => ({
      ...probeRecord(0),
      holder: {
        owner: 'latch-verify',
        lockId,
        acquiredAt: now,
        renewedAt: now,
        leaseMs: 60_000,
        expiresAt: now + 60_000,
      },
    });
    try {
      const first = await claim(key, { record: held('first'), expiredBefore: now });
      if (!first.ok && first.maybeApplied) throw outcomeUnknown('claim-once');
      const second = await claim(key, { record: held('second'), expiredBefore: now });
      // Refused, perhaps after an earlier attempt of it: the record it returns shows whether that applied.
      const secondApplied =
        second.ok || (second.maybeApplied === true && second.current?.record.holder?.lockId === 'second');
      if (!first.ok) this.fail('claim-once', 'a one-request claim of a new key was refused.');
      else if (secondApplied)
        this.fail(
          'claim-once',
          "a one-request claim of a key whose holder's lease had not ended applied: two clients could hold the lock.",
        );
      else this.pass('claim-once', 'a one-request claim applied on a new key and was refused on a held one.');
    } catch (error) {
      this.refuse('claim-once', error, 'a one-request claim');
    }
  }

  /** Runs one request of a check; a refusal is recorded (undefined), an outage thrown. */
  private async attempt(
    name: string,
    request: () => Promise<WriteOutcome>,
  ): Promise<WriteOutcome | undefined> {
    try {
      return await request();
    } catch (error) {
      this.refuse(name, error, 'the request');
      return undefined;
    }
  }

  private refuse(name: string, error: unknown, what: string, safety = true): void {
    // Only a store that says it lacks the feature is judged; an outage, a missing bucket or
    // denied access says nothing about its semantics: the caller hears it as it is.
    if (!(error instanceof LockStoreError) || error.code !== UNSUPPORTED) throw error;
    this.#checks.push({
      name,
      outcome: 'refused',
      safety,
      detail: `the store refused ${what}: ${error.message}`,
    });
  }

  private pass(name: string, detail: string, safety = true): void {
    this.#checks.push({ name, outcome: 'passed', safety, detail });
  }

  private fail(name: string, detail: string, safety = true): void {
    this.#checks.push({ name, outcome: 'failed', safety, detail });
  }

  private skip(name: string, detail: string): void {
    this.#checks.push({ name, outcome: 'skipped', safety: true, detail });
  }
}

/** A free record of the probe's own: a fresh write id makes each write's content, and so its version, new. */
function probeRecord(token: number): LockRecord {
  return { token, holder: null, writeId: randomUUID() };
}

/** The store, counting the requests sent through it. */
function countingStore(store: LockStore): { store: LockStore; requests(): number } {
  let requests = 0;
  const count =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A) => {
      requests++;
      return call(...args);
    };
  const counted: LockStore = {
    kind: store.kind,
    maxRecordBytes: store.maxRecordBytes,
    checkKey: (key) => store.checkKey(key),
    recordBytes: (record) => store.recordBytes(record),
    read: count((key) => store.read(key)),
    write: count((key, record, condition) => store.write(key, record, condition)),
    delete: count((key, version) => store.delete(key, version)),
    ...(store.claim ? { claim: count((key, request) => store.claim!(key, request)) } : {}),
    ...(store.serverTime ? { serverTime: count((key) => store.serverTime!(key)) } : {}),
  };
  return { store: counted, requests: () => requests };
}

/** A probe write whose outcome is unknown proves nothing either way: the check runs again later. */
function outcomeUnknown(check: string): LockStoreError {
  return new LockStoreError(
    `verifyStore: a write of the ${check} check may or may not have been applied (a lost answer or a timeout), so the check cannot judge the store; it runs again on the next try.`,
    { retryable: true, reason: 'unavailable' },
  );
}
