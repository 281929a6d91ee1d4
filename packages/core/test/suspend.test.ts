import { describe, expect, test } from 'vitest';
import {
  type ClockMode,
  type Lock,
  LockClient,
  LockLostError,
  memoryStore,
  type Scheduler,
} from '../src/index.js';
import { ManualTime } from './helpers/manual-time.js';

/**
 * A machine on `time` that can be suspended: while it sleeps its monotonic clock stands still and
 * its timers wait (they fall due on the monotonic clock), while its wall clock moves on with
 * everyone else's.
 */
function suspendableMachine(time: ManualTime) {
  const base = time.scheduler();
  let stoppedAt: number | undefined;
  let stoppedMs = 0;
  const asleep: Array<() => void> = [];
  const scheduler: Scheduler = {
    ...base,
    monotonic: () => (stoppedAt ?? time.elapsed) - stoppedMs,
    setTimer: (run, ms) => time.schedule(() => (stoppedAt === undefined ? run() : asleep.push(run)), ms),
  };
  return {
    scheduler,
    suspend: () => {
      stoppedAt = time.elapsed;
    },
    /** Wakes the machine; the timers that fell due meanwhile are returned, not run. */
    wake: () => {
      stoppedMs += time.elapsed - stoppedAt!;
      stoppedAt = undefined;
      return asleep.splice(0);
    },
  };
}

describe('a machine suspended past its lease (monotonic clock stopped, wall clock moved on)', () => {
  for (const mode of ['trusted', 'untrusted'] as ClockMode[]) {
    test(`${mode} clocks: the holder learns on its first look that the lease may be gone, before any timer runs`, async () => {
      const time = new ManualTime();
      const store = memoryStore();
      const machine = suspendableMachine(time);
      const holder = new LockClient({ store, leaseMs: 3_000, clock: { mode, time: machine.scheduler } });
      const other = new LockClient({ store, leaseMs: 3_000, clock: { mode, time: time.scheduler() } });
      const lock = await holder.acquire('k');

      machine.suspend();
      let taken: Lock | undefined;
      void other.acquire('k', { waitMs: 60_000 }).then((l) => (taken = l));
      expect(await time.until(() => taken !== undefined, 20_000)).toBe(true);
      const overdue = machine.wake();

      // By its monotonic clock the holder slept for no time at all; by the wall clock, for longer than the lease.
      expect(lock.isHeld).toBe(false);
      expect(lock.signal.aborted).toBe(true);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect((lock.signal.reason as LockLostError).message).toMatch(/suspended/);
      expect(taken!.isHeld).toBe(true);
      for (const run of overdue) run();
      await taken!.release();
    });
  }

  test('a suspend much shorter than the lease is not a loss', async () => {
    const time = new ManualTime();
    const machine = suspendableMachine(time);
    const holder = new LockClient({
      store: memoryStore(),
      leaseMs: 30_000,
      clock: { time: machine.scheduler },
    });
    const lock = await holder.acquire('k');
    machine.suspend();
    await time.advance(1_000); // within the slack (a twentieth of the lease, at most 1 s)
    for (const run of machine.wake()) run();
    expect(lock.isHeld).toBe(true);
    await lock.release();
  });
});
