import { expect, test } from 'vitest';
import type { Lock } from '../src/index.js';
import { replica, scriptedClients } from './helpers/scripted-clients.js';

// A Lambda sizes its lease to the invocation's time left: a lock whose acquiredAt is its first,
// failed try would store a lease that outlives the invocation by the whole wait.
test.each([
  ['read and conditional write', false],
  ['one-request claim', true],
])('a waiter that won on a later try counts its lock from that try (%s)', async (_name, oneRequestClaim) => {
  const s = scriptedClients({ heartbeatMs: false }, { oneRequestClaim });
  const holder = await replica(s).acquire('k');
  let mine: Lock | undefined;
  void s
    .client()
    .acquire('k', { leaseMs: 5_000 })
    .then((lock) => (mine = lock));
  await s.time.advance(1_000); // its tries find the key held
  const releasedAt = s.time.scheduler().now();
  await holder.release();
  expect(await s.time.until(() => mine !== undefined, 2_000)).toBe(true);
  expect(mine!.acquiredAt).toBeGreaterThanOrEqual(releasedAt);
  expect(mine!.expiresAt! - mine!.acquiredAt).toBe(5_000);
});
