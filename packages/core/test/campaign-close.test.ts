import { expect, test } from 'vitest';
import { type Lock, LockClient, memoryStore } from '../src/index.js';
import { ManualTime } from './helpers/manual-time.js';

// close() of a client while one of its campaigns leads releases the term's lock, so another
// replica is elected at once. The term must end with it: its signal aborts before the lock is
// given up, onDemoted runs and the campaign's `done` settles. (Before, the campaign waited for a
// loss or a stop that never came: the old leader's code believed it led beside the new one.)
// The simulator finds the same thing (seeds 7 and 33 before the fix).

test('close() while leading ends the term: the signal aborts first, onDemoted runs, done settles', async () => {
  const time = new ManualTime();
  const store = memoryStore();
  const replica = () =>
    new LockClient({ store, leaseMs: 60_000, pollMs: 50, clock: { time: time.scheduler() } });
  const leaderClient = replica();
  const followerClient = replica();

  let term: Lock | undefined;
  const demoted: string[] = [];
  let doneSettled = false;
  const leader = leaderClient.campaign('leader', {
    onElected: (lock) => {
      term = lock;
    },
    onDemoted: (reason) => demoted.push(reason),
  });
  leader.done.then(
    () => (doneSettled = true),
    () => (doneSettled = true),
  );
  await time.until(() => term !== undefined, 1_000);
  expect(leader.isLeader).toBe(true);

  let oldTermSignalAbortedAtElection: boolean | undefined;
  const follower = followerClient.campaign('leader', {
    onElected: () => {
      oldTermSignalAbortedAtElection = term!.signal.aborted;
    },
  });
  await time.advance(200);
  expect(oldTermSignalAbortedAtElection).toBeUndefined();

  await leaderClient.close();
  await time.advance(0);
  expect(term!.signal.aborted).toBe(true);
  expect(demoted).toEqual(['resigned']);
  expect(doneSettled).toBe(true);
  expect(leader.isLeader).toBe(false);

  // The next term began only after the old one's signal had aborted.
  expect(await time.until(() => oldTermSignalAbortedAtElection !== undefined, 1_000)).toBe(true);
  expect(oldTermSignalAbortedAtElection).toBe(true);
  await follower.stop();
});

test('close() while campaigning, not leading, ends the campaign', async () => {
  const time = new ManualTime();
  const store = memoryStore();
  const replica = () =>
    new LockClient({ store, leaseMs: 60_000, pollMs: 50, clock: { time: time.scheduler() } });
  const blocker = await replica().acquire('leader');
  const locks = replica();
  let doneSettled = false;
  const campaign = locks.campaign('leader', { onElected: () => undefined });
  campaign.done.then(() => (doneSettled = true));
  await time.advance(200);
  await locks.close();
  await time.advance(0);
  expect(doneSettled).toBe(true);
  await blocker.release();
});

// A term whose onElected throws is resigned by the campaign itself: it stops leading at once and
// releases the lock, then runs onDemoted('resigned'). close() called while that release is on
// its way finds no term led (the simulator's check counted this one as led: seeds 100567 and
// 101113); the campaign still ends once, and `done` settles.
test('close() while the campaign resigns a term whose onElected threw: one onDemoted, done settles', async () => {
  const time = new ManualTime();
  const store = memoryStore();
  const replica = () =>
    new LockClient({ store, leaseMs: 60_000, pollMs: 50, clock: { time: time.scheduler() } });
  const locks = replica();
  let term: Lock | undefined;
  let closed: Promise<void> | undefined;
  const demoted: string[] = [];
  const errors: unknown[] = [];
  let doneSettled = false;
  const campaign = locks.campaign('leader', {
    onElected: (lock) => {
      term = lock;
      // close() begins right after the throw, while the campaign releases the term's lock.
      queueMicrotask(() => {
        closed = locks.close();
      });
      throw new Error('cannot lead');
    },
    onDemoted: (reason) => demoted.push(reason),
    onError: (error) => errors.push(error),
  });
  campaign.done.then(
    () => (doneSettled = true),
    () => (doneSettled = true),
  );
  await time.until(() => closed !== undefined, 1_000);
  expect(campaign.isLeader).toBe(false);
  await closed;
  await time.advance(0);
  expect(errors).toHaveLength(1);
  expect(demoted).toEqual(['resigned']);
  expect(doneSettled).toBe(true);
  expect(term!.isHeld).toBe(false);

  // The key is free: another replica is elected.
  const other = replica();
  let elected = false;
  const next = other.campaign('leader', {
    onElected: () => {
      elected = true;
    },
  });
  expect(await time.until(() => elected, 1_000)).toBe(true);
  await next.stop();
});
