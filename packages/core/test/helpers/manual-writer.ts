import type { LockRecord, VersionedRecord } from '../../src/contract/lock-record.js';
import type { LockStore } from '../../src/contract/lock-store.js';
import { WriterDriver } from '../../src/engine/cas/writer-driver.js';
import { memoryStore } from '../../src/index.js';
import type { WriterTerms } from '../../src/protocol/writer-state.js';
import type { ClockMode } from '../../src/shared/clock.js';
import { LockStoreError } from '../../src/shared/errors.js';
import type { Scheduler } from '../../src/shared/scheduler.js';
import type { ManualTime } from './manual-time.js';

// A writer of the state machine on manual time, against a memory store a test can watch and stall.

/**
 * A memory store that counts requests, holds its writes back while `holdWrites` (until
 * `releaseWrites()`), and refuses them for certain while `refuseWrites` (or the next
 * `refuseNext` of them); `sent` keeps
 * every record sent, in order.
 */
export function watchedStore() {
  const inner = memoryStore();
  const state = {
    requests: 0,
    holdWrites: false,
    refuseWrites: false,
    refuseNext: 0,
    sent: [] as LockRecord[],
  };
  let held: (() => void)[] = [];
  const store: LockStore = Object.assign(Object.create(inner) as LockStore, {
    async read(key: string) {
      state.requests++;
      return inner.read(key);
    },
    async write(...args: Parameters<LockStore['write']>) {
      state.requests++;
      state.sent.push(args[1]);
      if (state.holdWrites) await new Promise<void>((resolve) => held.push(resolve));
      const refuseThis = state.refuseNext > 0;
      if (refuseThis) state.refuseNext--;
      if (state.refuseWrites || refuseThis) {
        throw new LockStoreError('connection refused', {
          retryable: true,
          maybeApplied: false,
          reason: 'unavailable',
        });
      }
      return inner.write(...args);
    },
  });
  const releaseWrites = () => {
    state.holdWrites = false;
    for (const resolve of held) resolve();
    held = [];
  };
  return { store, state, releaseWrites };
}

/** Writer `n` of key "k" on `time`: a 10 s lease trusted for 10 s less `marginMs` (1 s), stored with context "caller n". */
export function writerOn(
  store: LockStore,
  time: ManualTime,
  n: number,
  options: {
    limit?: number;
    marginMs?: number;
    clockMode?: ClockMode;
    scheduler?: Scheduler;
    /** The acquisition (default `L<n>`): another writer of the same one is a resume. */
    lockId?: string;
    /** Terms over the defaults (a 10 s lease, renewed halfway through). */
    terms?: Partial<WriterTerms>;
    onRenewed?: () => void;
    /** Its caller paces its tries (`attempt()`). */
    pacedByCaller?: boolean;
  } = {},
) {
  const terms: WriterTerms = {
    leaseMs: 10_000,
    claimBy: 'version',
    marginMs: options.marginMs ?? 1_000,
    retryMs: 50,
    ...options.terms,
  };
  const scheduler = options.scheduler ?? time.scheduler();
  return new WriterDriver({
    store,
    key: 'k',
    lockId: options.lockId ?? `L${n}`,
    writer: `w${n}`,
    owner: 'this client',
    context: `caller ${n}`,
    terms,
    limit: options.limit ?? 1,
    clockMode: options.clockMode ?? 'trusted',
    time: scheduler,
    ...(options.onRenewed ? { onRenewed: options.onRenewed } : {}),
    ...(options.pacedByCaller ? { pacedByCaller: true } : {}),
    claimable: (current: VersionedRecord) => {
      const expiresAt = current.record.holder?.expiresAt;
      return expiresAt != null && expiresAt <= scheduler.now();
    },
  });
}
