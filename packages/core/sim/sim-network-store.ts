import type { VersionedRecord } from '../src/contract/lock-record.js';
import type {
  ClaimOutcome,
  ClaimRequest,
  LockStore,
  WriteCondition,
  WriteOutcome,
} from '../src/contract/lock-store.js';
import { encodeRecord } from '../src/contract/record-codec.js';
import { LockStoreError } from '../src/shared/errors.js';
import type { SimBackend } from './backend.js';
import type { Rng } from './rng.js';
import type { SimProcess } from './sim-scheduler.js';
import { bump } from './stats.js';
import type { Trace } from './trace.js';
import type { World } from './world.js';

/** Per-request fault probabilities while faults are on. */
export interface FaultRates {
  /** The request never reaches the store; the client times out. */
  lostRequest: number;
  /** The store applies it, the answer is lost; the client times out. */
  lostAnswer: number;
  /** The store applies it after the client timed out and re-read; the answer is lost. */
  lateApply: number;
  /** Retryable throttling error, certainly not applied. */
  throttle: number;
  /** A long latency tail on the request or the answer (may exceed the timeout). */
  slow: number;
  /** Applied, answer lost, the SDK retries once and the retry fails the condition against our own write. */
  sdkRetry: number;
}

export interface NetworkSettings {
  requestTimeoutMs: number;
  /** Faults hit requests sent before this virtual time only. */
  faultsUntil: number;
  rates: FaultRates;
  /** Latest a late-applied request may land after its timeout, in ms. */
  lateApplyMaxMs: number;
}

type Op = 'read' | 'write' | 'delete' | 'claim';

/** Fault rates on a flaky link. */
const FLAKY_RATES: FaultRates = {
  lostRequest: 0.12,
  lostAnswer: 0.15,
  lateApply: 0.1,
  throttle: 0.1,
  slow: 0.1,
  sdkRetry: 0.05,
};

/**
 * One client's view of the shared store: a LockStore whose every request crosses a simulated
 * network that delays, loses, reorders, throttles, partitions and applies late. The client
 * side times out after `requestTimeoutMs` (on the client's own event loop, so a paused client
 * times out late) and throws what the real stores throw: a retryable LockStoreError whose
 * `maybeApplied` is true for writes (the request may have landed) and false for reads.
 */
export class SimNetwork {
  /** Requests sent (or lost) while this is in the future are lost or refused. */
  partitionedUntil = 0;
  /**
   * A flaky link until then (congestion, a failing NAT): most requests still get through, but
   * losses, late applies and throttling are frequent, so faults compound (a lost answer, then
   * a failed re-read) far more often than independent draws would make them.
   */
  flakyUntil = 0;
  readonly store: LockStore;

  constructor(
    private readonly world: World,
    private readonly process: SimProcess,
    backend: SimBackend,
    private readonly settings: NetworkSettings,
    private readonly rng: Rng,
    private readonly counters: { storeRequests: number; faults: Record<string, number> },
    private readonly trace: Trace,
  ) {
    const store: LockStore = {
      kind: backend.flavor === 'dynamo' ? 'sim-dynamodb' : 'sim-s3',
      maxRecordBytes: 16 * 1024,
      checkKey: () => undefined,
      recordBytes: (record) => Buffer.byteLength(encodeRecord(record)),
      read: (key) => this.send<VersionedRecord | null>('read', key, () => backend.read(key)),
      write: (key, record, condition: WriteCondition) => {
        const text = encodeRecord(record); // serialised when sent, as an SDK does
        return this.send<WriteOutcome>('write', key, () => backend.write(key, text, condition, process.id));
      },
      delete: (key, version) =>
        this.send<WriteOutcome>('delete', key, () => backend.delete(key, version, process.id)),
    };
    if (backend.flavor === 'dynamo') {
      store.claim = (key, request: ClaimRequest) => {
        const text = encodeRecord(request.record);
        const copy = { ...request };
        return this.send<ClaimOutcome>('claim', key, () => backend.claim(key, text, copy, process.id));
      };
    }
    this.store = store;
  }

  private get faultsOn(): boolean {
    return this.world.now < this.settings.faultsUntil;
  }

  private partitioned(): boolean {
    return this.world.now < this.partitionedUntil;
  }

  private fault(kind: string, key: string, op: Op): void {
    bump(this.counters.faults, kind);
    this.trace.add(this.world.now, this.process.id, key, `fault ${kind} on ${op}`);
  }

  /** One-way latency: a few ms, sometimes a long tail while faults are on. */
  private latency(key: string, op: Op): number {
    const slow = this.world.now < this.flakyUntil ? FLAKY_RATES.slow : this.settings.rates.slow;
    if (this.faultsOn && this.rng.chance(slow)) {
      this.fault('slow', key, op);
      return this.rng.real(100, 2500);
    }
    return 0.5 + this.rng.exp(this.faultsOn ? 6 : 3);
  }

  /** One draw decides which fault (if any) hits a request; late applies and SDK retries hit writes only. */
  private pickFault(isWrite: boolean): string {
    const rates = this.world.now < this.flakyUntil ? FLAKY_RATES : this.settings.rates;
    const kinds: Array<[string, number]> = [
      ['lost-request', rates.lostRequest],
      ['lost-answer', rates.lostAnswer],
      ['throttle', rates.throttle],
      ['late-apply', isWrite ? rates.lateApply : 0],
      ['sdk-retry', isWrite ? rates.sdkRetry : 0],
    ];
    let r = this.rng.next();
    for (const [kind, p] of kinds) {
      if (r < p) return kind;
      r -= p;
    }
    return 'none';
  }

  private send<T>(op: Op, key: string, apply: () => T): Promise<T> {
    this.counters.storeRequests++;
    const isWrite = op !== 'read';
    const { requestTimeoutMs } = this.settings;
    this.trace.add(this.world.now, this.process.id, key, `send ${op}`);
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const finish = (settleIt: () => void) => {
        if (done) return;
        done = true;
        timeout.cancel();
        settleIt();
      };
      const timeout = this.process.after(requestTimeoutMs, () =>
        finish(() => {
          this.trace.add(this.world.now, this.process.id, key, `timeout ${op}`);
          reject(
            new LockStoreError(
              `simulated timeout: ${op} "${key}" got no answer within ${requestTimeoutMs} ms`,
              { retryable: true, maybeApplied: isWrite, reason: 'unavailable' },
            ),
          );
        }),
      );
      const answer = (deliver: () => void) => {
        this.process.after(this.latency(key, op), () => {
          if (this.partitioned()) {
            this.fault('partition-answer', key, op);
            return;
          }
          finish(deliver);
        });
      };
      const arrive = (run: () => void) => this.world.after(this.latency(key, op), run);

      if (this.partitioned()) {
        if (this.rng.chance(0.5)) {
          this.fault('partition-refused', key, op);
          this.process.after(this.rng.real(1, 50), () =>
            finish(() =>
              reject(
                new LockStoreError(`simulated network error: ${op} "${key}": connection refused`, {
                  retryable: true,
                  maybeApplied: false,
                  reason: 'unavailable',
                }),
              ),
            ),
          );
        } else {
          this.fault('partition-lost', key, op);
        }
        return;
      }
      const kind = this.faultsOn ? this.pickFault(isWrite) : 'none';
      if (kind !== 'none') this.fault(kind, key, op);
      switch (kind) {
        case 'lost-request':
          return;
        case 'throttle':
          answer(() =>
            reject(
              new LockStoreError(`simulated throttling: ${op} "${key}": slow down`, {
                retryable: true,
                maybeApplied: false,
                reason: 'throttled',
              }),
            ),
          );
          return;
        case 'lost-answer':
          arrive(() => this.applyTraced(op, key, apply));
          return;
        case 'late-apply': {
          // Lands after the timeout and after the client's re-read: hundreds of ms to a few leases later.
          const lateBy = requestTimeoutMs + this.rng.real(200, this.settings.lateApplyMaxMs);
          this.world.after(lateBy, () => this.applyTraced(op, key, apply, 'late '));
          return;
        }
        case 'sdk-retry':
          arrive(() => {
            this.applyTraced(op, key, apply, 'first try ');
            // The SDK's second attempt meets our own write and fails its condition.
            arrive(() => {
              const second = this.applyTraced(op, key, apply, 'retry ');
              const outcome = second as { ok?: boolean };
              const result = (outcome.ok === false ? { ...second, maybeApplied: true } : second) as T;
              answer(() => resolve(result));
            });
          });
          return;
        default:
          arrive(() => {
            const result = this.applyTraced(op, key, apply);
            answer(() => resolve(result));
          });
      }
    });
  }

  private applyTraced<T>(op: Op, key: string, apply: () => T, note = ''): T {
    const result = apply();
    const outcome = result as { ok?: boolean; version?: string } | null;
    const what =
      op === 'read'
        ? `read ${(result as VersionedRecord | null)?.version ?? 'none'}`
        : `${note}${op} ${outcome?.ok ? `ok ${outcome.version}` : 'conflict'}`;
    this.trace.add(this.world.now, 'store', key, `${what} (from ${this.process.id})`);
    return result;
  }
}
