import { expect, test } from 'vitest';
import type { Lock } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// Pins a window the core README states (safety model, "What remains"; local passes): a lease
// taken over early by a client whose clock runs beyond `toleranceMs` is still passed on with no
// write by the client that held it, until that client's next renewal learns of the takeover.

type Scripted = ReturnType<typeof scriptedClients>;

function queue(locks: ReturnType<Scripted['client']>, key: string) {
  let lock: Lock | undefined;
  void locks.acquire(key).then((won) => (lock = won));
  return () => lock;
}

test('after an early takeover, a call that began after the taker got its token is passed the old lease with a lower token, until the next renewal ends it', async () => {
  const s = scriptedClients({ heartbeatMs: 1_000, localTurnMs: Number.POSITIVE_INFINITY });
  const locks = s.client();
  const first = await locks.acquire('k');
  const second = queue(locks, 'k');
  await s.time.advance(1);
  await first.release(); // a hand-over with a write: tokens are reserved for local passes
  await s.time.advance(1);
  const holder = second()!;

  // Its wall clock a minute ahead, beyond any tolerance: the 10 s lease looks long over.
  const early = await replica(s, { clock: { time: s.time.scheduler(60_000) } }).tryAcquire('k');
  expect(early).not.toBeNull();
  expect(held(holder)).toBe(true); // nothing told the holder yet

  const next = queue(locks, 'k'); // begins after the taker got its token
  await s.time.advance(1);
  await holder.release(); // passed on with no write
  await s.time.advance(1);
  const passed = next()!;
  expect(passed.fencingToken).toBeLessThan(early!.fencingToken); // fencing refuses its writes
  expect(held(passed)).toBe(true);

  await s.time.advance(1_100); // the lease's next renewal finds the record taken
  expect(passed.signal.aborted).toBe(true);
  expect(held(early ?? undefined)).toBe(true);
});

test('once the client has read a record with a token above its lease (a takeover), it passes the lock on only with a write, which learns the loss', async () => {
  const s = scriptedClients({ heartbeatMs: 1_000, localTurnMs: Number.POSITIVE_INFINITY });
  const locks = s.client();
  const first = await locks.acquire('k');
  const second = queue(locks, 'k');
  await s.time.advance(1);
  await first.release();
  await s.time.advance(1);
  const holder = second()!;

  const early = await replica(s, { clock: { time: s.time.scheduler(60_000) } }).tryAcquire('k');
  expect(early).not.toBeNull();
  const seen = await locks.inspect('k'); // this client now knows the record moved on
  expect(seen.fencingToken).toBe(early!.fencingToken);

  const next = queue(locks, 'k');
  await s.time.advance(1);
  await holder.release().catch(() => undefined); // its hand-over write finds the record taken
  await s.time.advance(1);
  expect(next()).toBeUndefined(); // not passed a lease that is gone: it waits for the taker
  expect(held(early ?? undefined)).toBe(true);
});
