import fc from 'fast-check';
import { expect, test } from 'vitest';
import type { LockRecord } from '../../src/contract/lock-record.js';
import type { LockStore, WriteCondition } from '../../src/contract/lock-store.js';
import { WriterDriver } from '../../src/engine/cas/writer-driver.js';
import { memoryStore } from '../../src/index.js';
import { LockStoreError } from '../../src/shared/errors.js';
import { systemScheduler } from '../../src/shared/scheduler.js';

// Random runs of writers driven against the memory store through a network that loses answers
// after the write applied, times writes out before they apply, refuses them, and fails reads:
// never two inside, the data of the last release that succeeded is what the record keeps (updates
// made while holding included), and once every writer ended, nothing of theirs is left in it.

type Fault = 'ok' | 'lostAnswer' | 'timeout' | 'refused' | 'readFails';

function faulty(store: LockStore, faults: Fault[]): LockStore {
  const next = () => faults.shift() ?? 'ok';
  const unknown = () =>
    new LockStoreError('no answer', { retryable: true, maybeApplied: true, reason: 'unavailable' });
  return Object.assign(Object.create(store) as LockStore, {
    async read(key: string) {
      if (next() === 'readFails') throw unknown();
      return store.read(key);
    },
    async write(key: string, record: LockRecord, condition: WriteCondition) {
      const fault = next();
      if (fault === 'timeout') throw unknown();
      if (fault === 'refused') {
        throw new LockStoreError('connection refused', { retryable: true, reason: 'unavailable' });
      }
      const outcome = await store.write(key, record, condition);
      if (fault === 'lostAnswer') throw unknown();
      return outcome;
    },
  });
}

const plan = fc.record({
  faults: fc.array(fc.constantFrom<Fault>('ok', 'lostAnswer', 'timeout', 'refused', 'readFails'), {
    maxLength: 25,
  }),
  writers: fc.array(
    fc.record({
      startMs: fc.integer({ min: 0, max: 20 }),
      holdMs: fc.integer({ min: 0, max: 10 }),
      /** Gives up this many ms after starting, unless it holds by then. */
      giveUpMs: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
      failClosed: fc.boolean(),
      /** Stores data once while holding (an update), before its release stores its own. */
      updates: fc.boolean(),
    }),
    { minLength: 2, maxLength: 4 },
  ),
});

test('writers under lost answers, timeouts, refusals and failed reads: one inside at a time, the last released data kept, nothing left behind', async () => {
  await fc.assert(
    fc.asyncProperty(plan, async ({ faults, writers }) => {
      const inner = memoryStore();
      const store = faulty(inner, [...faults]);
      let inside = 0;
      let most = 0;
      /** The data of the last release that succeeded, as its caller was told. */
      let lastReleased: unknown;
      const runs = writers.map(async (spec, n) => {
        await sleep(spec.startMs);
        const writer = new WriterDriver({
          store,
          key: 'k',
          lockId: `L${n}`,
          writer: `w${n}`,
          owner: 'test',
          terms: {
            leaseMs: spec.failClosed ? null : 10_000,
            claimBy: 'version',
            marginMs: 1_000,
            retryMs: 3,
          },
          limit: 1,
          time: systemScheduler,
          claimable: () => false,
        });
        let holding = false;
        const acquired = writer.acquire().then(
          () => {
            holding = true;
          },
          () => undefined,
        );
        if (spec.giveUpMs !== undefined) {
          await Promise.race([acquired, sleep(spec.giveUpMs)]);
          if (!holding) writer.giveUp();
        }
        await acquired;
        if (holding) {
          inside++;
          most = Math.max(most, inside);
          // An update that fails leaves the lease as it was (refused) or ends it (lost).
          if (spec.updates)
            await writer.extend(spec.failClosed ? null : 10_000, { n, update: true }).catch(() => undefined);
          await sleep(spec.holdMs);
          inside--;
          // A refused release leaves it held: the caller tries again.
          for (;;) {
            try {
              await writer.release({ n });
              lastReleased = { n };
              break;
            } catch (error) {
              if (!(error instanceof LockStoreError)) break;
            }
          }
        }
        await writer.ended;
      });
      await Promise.all(runs);
      expect(most).toBeLessThanOrEqual(1);
      // Read past the faulty network: a fault left over in the plan is not the writers'.
      const last = await inner.read('k');
      expect(last?.record.holder ?? null).toBeNull();
      if (lastReleased !== undefined) expect(last?.record.data).toEqual(lastReleased);
    }),
    { numRuns: 40 },
  );
}, 120_000);

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
