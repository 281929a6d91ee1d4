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
import { scriptedStore } from './helpers/scripted-store.js';

/**
 * A machine on `time` that can be suspended: while it sleeps its monotonic clock stands still and
 * its timers wait (they fall due on the monotonic clock), while its wall clock moves on with
 * everyone else's.
 */
function suspendableMachine(time: ManualTime) {
  const base = time.scheduler();
  let stoppedAt: number | undefined;
  let stoppedMs = 0;
  let steppedMs = 0;
  const asleep: Array<() => void> = [];
  const scheduler: Scheduler = {
    ...base,
    now: () => base.now() + steppedMs,
    monotonic: () => (stoppedAt ?? time.elapsed) - stoppedMs,
    setTimer: (run, ms) => time.schedule(() => (stoppedAt === undefined ? run() : asleep.push(run)), ms),
  };
  return {
    scheduler,
    /** Steps the wall clock (an NTP correction). */
    stepWall: (ms: number) => {
      steppedMs += ms;
    },
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

  test('a wall clock stepped back an hour before the suspend does not hide it, once a check ran in between', async () => {
    const time = new ManualTime();
    const store = memoryStore();
    const machine = suspendableMachine(time);
    const holder = new LockClient({
      store,
      leaseMs: 3_000,
      clock: { mode: 'untrusted', time: machine.scheduler },
    });
    const other = new LockClient({
      store,
      leaseMs: 3_000,
      clock: { mode: 'untrusted', time: time.scheduler() },
    });
    const lock = await holder.acquire('k');
    machine.stepWall(-3_600_000);
    expect(lock.isHeld).toBe(true); // a check: the wall clock went back, nothing was lost

    machine.suspend();
    let taken: Lock | undefined;
    void other.acquire('k', { waitMs: 60_000 }).then((l) => (taken = l));
    expect(await time.until(() => taken !== undefined, 20_000)).toBe(true);
    const overdue = machine.wake();
    expect(lock.isHeld).toBe(false);
    expect((lock.signal.reason as LockLostError).message).toMatch(/suspended/);
    for (const run of overdue) run();
    await taken!.release();
  });

  test('a suspend longer than the slack but shorter than what is left of the lease is not a loss: close() then frees the key (sweep seed 603775)', async () => {
    const time = new ManualTime();
    const store = memoryStore();
    const machine = suspendableMachine(time);
    const holder = new LockClient({ store, leaseMs: 100_000, clock: { time: machine.scheduler } });
    const lock = await holder.acquire('k');
    machine.suspend();
    await time.advance(3_000); // three times the slack, three hundredths of the lease
    for (const run of machine.wake()) run();
    expect(lock.isHeld).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    await holder.close();
    const other = new LockClient({ store, leaseMs: 3_000, clock: { time: time.scheduler() } });
    expect(await other.tryAcquire('k')).not.toBeNull(); // not left held for the rest of the lease
  });

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

describe('a claim answered after a suspend (found by simulator seeds 100391, 100735, 100789)', () => {
  for (const mode of ['trusted', 'untrusted'] as ClockMode[]) {
    test(`${mode} clocks: the lease it won is not handed out when another client took the key meanwhile`, async () => {
      const time = new ManualTime();
      const scripted = scriptedStore(time);
      const machine = suspendableMachine(time);
      const holder = new LockClient({
        store: scripted.store,
        leaseMs: 3_000,
        clock: { mode, time: machine.scheduler },
      });
      const other = new LockClient({
        store: scripted.inner,
        leaseMs: 3_000,
        clock: { mode, time: time.scheduler() },
      });
      // The claim lands at once; its answer comes 8 s later, when the machine is awake again.
      scripted.nextWrite({ kind: 'slow', ms: 8_000 });
      let got: Lock | undefined;
      void holder.acquire('k', { waitMs: 60_000 }).then((l) => (got = l));
      await time.advance(0);
      machine.suspend();

      let taken: Lock | undefined;
      void other.acquire('k', { waitMs: 60_000 }).then((l) => (taken = l));
      expect(await time.until(() => taken !== undefined, 7_000)).toBe(true);
      await time.advance(7_000 - time.elapsed);
      for (const run of machine.wake()) run();
      // By the monotonic clock the answer came 1 s after the claim was sent: well within the lease.
      await time.advance(1_500);

      expect(taken!.isHeld).toBe(true);
      expect(got).toBeUndefined(); // the stale lease (token below the new holder's) was not handed out
      await taken!.release();
      expect(await time.until(() => got !== undefined, 20_000)).toBe(true);
      expect(got!.fencingToken).toBeGreaterThan(taken!.fencingToken);
      await got!.release();
    });
  }
});

describe('a hand-over answered after a suspend (found by simulator seed 604296)', () => {
  test('the waiter is not handed a lease whose stored expiry passed while the machine slept; it waits on and gets the key after the new holder', async () => {
    const time = new ManualTime();
    const scripted = scriptedStore(time);
    const machine = suspendableMachine(time);
    const holder = new LockClient({ store: scripted.store, clock: { time: machine.scheduler } });
    const other = new LockClient({
      store: scripted.inner,
      leaseMs: 3_000,
      clock: { time: time.scheduler() },
    });
    const first = await holder.acquire('k', { leaseMs: 1_000 });
    // A waiter with another lease length: the release hands the key over with one write.
    let got: Lock | undefined;
    void holder.acquire('k', { leaseMs: 4_000, waitMs: 60_000 }).then((l) => (got = l));
    await time.advance(0);
    // The hand-over lands at once; its answer comes 7.1 s later.
    scripted.nextWrite({ kind: 'slow', ms: 7_100 });
    void first.release();
    // The handing lock's own deadline passes by the monotonic clock, then the machine sleeps.
    await time.advance(950);
    machine.suspend();
    let taken: Lock | undefined;
    void other.acquire('k', { waitMs: 60_000 }).then((l) => (taken = l));
    expect(await time.until(() => taken !== undefined, 5_500)).toBe(true);
    await time.advance(7_000 - time.elapsed);
    for (const run of machine.wake()) run();
    // The answer comes about 1 s (monotonic) after the hand-over was sent: well within the
    // waiter's 4 s lease by that clock, yet the expiry it stored passed 3 s ago by the wall clock.
    await time.advance(1_500);

    expect(taken!.isHeld).toBe(true);
    expect(got).toBeUndefined();
    await taken!.release();
    expect(await time.until(() => got !== undefined, 20_000)).toBe(true);
    expect(got!.fencingToken).toBeGreaterThan(taken!.fencingToken);
    await got!.release();
  });
});
