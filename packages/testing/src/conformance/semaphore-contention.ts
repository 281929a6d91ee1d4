// Semaphores under contention: never more holders than the limit, the limit actually reached
// (so a semaphore that behaves as a lock fails), and fencing tokens that never repeat and grow
// across every release that finished before the next acquire began.
import { expect, test } from 'vitest';
import type { LockClientLike } from './latch-module.js';
import { delay, type LockRun, uniqueKey } from './lock-run.js';

/** One acquisition as the test saw it, its moments on a logical clock (one tick per event). */
interface Acquisition {
  token: number;
  /** When acquire() was called. */
  calledAt: number;
  /** When its release() had resolved (Infinity: it rejected, and the client retries it). */
  releasedAt: number;
}

const CLIENTS = 5;
const CONTENDERS_PER_CLIENT = 4;
const ROUNDS = 3;
/**
 * How long holders keep their slots while fewer than `limit` have held at once: long enough
 * for every slot to be taken on a slow store, and bounded so that a semaphore that admits
 * fewer fails quickly.
 */
const FILL_MS = 5000;

export function semaphoreContentionCases<Store>(run: LockRun<Store>): void {
  const { client } = run;
  const { LockStoreError } = run.latch;

  for (const limit of [1, 3, 5]) {
    test(`semaphore (limit ${limit}): ${CLIENTS * CONTENDERS_PER_CLIENT} contenders on ${CLIENTS} clients never exceed ${limit} holders and reach ${limit}; every release resolves; tokens are unique and grow across every release → acquire`, async () => {
      const key = uniqueKey(`semaphore-${limit}`);
      const replicas = Array.from({ length: CLIENTS }, () => client({ leaseMs: 5000 }));
      let tick = 0;
      let live = 0;
      let peak = 0;
      const fillBy = Date.now() + FILL_MS;
      const history: Acquisition[] = [];
      const failedReleases: string[] = [];

      const contender = async (replica: LockClientLike) => {
        for (let round = 0; round < ROUNDS; round++) {
          const calledAt = ++tick;
          const lock = await replica.acquire(key, { limit, waitMs: 60_000 });
          // Counted from after acquire resolved to before release is called: inside the real hold.
          live += 1;
          peak = Math.max(peak, live);
          await delay(1 + Math.random() * 15);
          while (peak < limit && Date.now() < fillBy) await delay(10);
          live -= 1;
          let releasedAt = Number.POSITIVE_INFINITY;
          try {
            await lock.release();
            releasedAt = ++tick;
          } catch (error) {
            // A store error leaves the release to the client's background retry: it has not finished.
            if (!(error instanceof LockStoreError)) throw error;
            failedReleases.push((error as Error).message);
          }
          history.push({ token: lock.fencingToken, calledAt, releasedAt });
        }
      };
      try {
        await Promise.all(
          replicas.flatMap((replica) =>
            Array.from({ length: CONTENDERS_PER_CLIENT }, () => contender(replica)),
          ),
        );
      } finally {
        // Stops contenders left waiting when one failed, and finishes releases still being retried.
        await Promise.allSettled(replicas.map((replica) => replica.close()));
      }

      expect(peak, `more than ${limit} held the key at once`).toBeLessThanOrEqual(limit);
      expect(peak, `never ${limit} holders at once`).toBe(limit);
      expect(history).toHaveLength(CLIENTS * CONTENDERS_PER_CLIENT * ROUNDS);
      const tokens = history.map((entry) => entry.token);
      expect(new Set(tokens).size, 'a fencing token was given twice').toBe(tokens.length);
      const outOfOrder: string[] = [];
      for (const earlier of history) {
        for (const later of history) {
          if (earlier.releasedAt < later.calledAt && earlier.token >= later.token) {
            outOfOrder.push(`token ${later.token} acquired after token ${earlier.token} was released`);
          }
        }
      }
      expect(outOfOrder).toEqual([]);
      // The store was healthy: other holders' writes must not make a release give up.
      expect(failedReleases, 'lock.release() rejected on a healthy store').toEqual([]);
      const info = await client().inspect(key);
      expect(info.holders, 'slots still held after every release').toEqual([]);
      expect(info.state).toBe('free');
    }, 120_000);
  }
}
