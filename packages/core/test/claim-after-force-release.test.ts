import { expect, test } from 'vitest';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// A client's claims after a forceRelease freed a fail-closed record that this client's own write
// left held, or while that forceRelease's answer is still on its way: they go by the record in
// the store, and no lock of this client is left holding a lease nobody keeps.

const FAIL_CLOSED = Number.POSITIVE_INFINITY;

test("a claim after another client's forceRelease reads the record, though this client's own write left it held", async () => {
  const s = scriptedClients({ leaseMs: FAIL_CLOSED });
  const a = s.client();
  const lease = (lockId: string) =>
    a.engine.newLease({
      key: 'k',
      lockId,
      leaseMs: FAIL_CLOSED,
      limit: 1,
      heartbeatMs: false,
      verifyMs: 60_000,
      pacedByCaller: true,
    });
  const first = lease('first');
  expect(await first.attempt()).toHaveProperty('token');
  expect(await replica(s).forceRelease('k')).toBe(true);
  const second = lease('second');
  expect(await second.attempt()).toHaveProperty('token');
  expect((await replica(s).inspect('k')).state).toBe('held');
  first.giveUp();
  second.giveUp();
});

test('forceRelease answered after its free record landed: no lock of its own client is left holding a lease nobody keeps', async () => {
  const s = scriptedClients({ leaseMs: FAIL_CLOSED });
  const holder = await replica(s).acquire('k');
  const a = s.client();
  s.scripted.nextWrite({ kind: 'slow', ms: 500 }, (record) => record?.holder === null); // the free record
  const freeing = a.forceRelease('k');
  await s.time.advance(10); // it has landed; its answer is on its way
  // Whatever the client answers meanwhile, a lock it hands out must keep the key, and one it
  // does not hand out must leave nothing held in the store.
  const early = await a.tryAcquire('k');
  const waiting = a.acquire('k');
  await s.time.advance(600);
  expect(await freeing).toBe(true);
  expect(held(holder)).toBe(true); // (it learns of the forceRelease at its next look)
  const taken = early ?? (await waiting);
  expect(held(taken)).toBe(true);
  const info = await replica(s).inspect('k');
  expect(info.state === 'held' && info.fencingToken).toBe(taken.fencingToken);
  await taken.release();
  if (early) await (await waiting).release();
  expect((await replica(s).inspect('k')).state).toBe('free');
});
