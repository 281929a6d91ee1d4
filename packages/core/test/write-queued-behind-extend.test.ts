import { describe, expect, test } from 'vitest';
import type { Lock } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

describe('a write queued behind extend(shorter) counts its deadline with the lease it will write', () => {
  test('update() called while extend(2 s) is in flight (no faults at all)', async () => {
    const s = scriptedClients({ heartbeatMs: false });
    const lock = await s.client().acquire('k');
    const extended = lock.extend(2_000);
    const updated = lock.update('x'); // queued behind the extend, renews with the 2 s lease
    await extended;
    await updated;
    let taken: Lock | undefined;
    void replica(s)
      .acquire('k')
      .then((l) => (taken = l));
    expect(await s.time.until(() => taken !== undefined, 20_000)).toBe(true);
    expect(held(lock) && held(taken)).toBe(false);
  });

  test('a heartbeat that fired while extend(2 s) was in flight', async () => {
    const s = scriptedClients({ heartbeatMs: 3_000 });
    const lock = await s.client().acquire('k');
    await s.time.advance(2_900);
    s.scripted.nextWrite({ kind: 'slow', ms: 200 }); // the extend: applied, answered at 3.1 s
    const extended = lock.extend(2_000);
    await s.time.advance(300); // the heartbeat fires at 3 s, queued behind the extend
    await extended;
    for (let i = 0; i < 2000; i++) s.scripted.nextWrite({ kind: 'refused' }); // the holder is cut off (fast retries included)
    let taken: Lock | undefined;
    void replica(s)
      .acquire('k')
      .then((l) => (taken = l));
    expect(await s.time.until(() => taken !== undefined, 20_000)).toBe(true);
    expect(held(lock) && held(taken)).toBe(false);
  });
});

describe('a write queued behind extend(Infinity)', () => {
  test('update() called while extend(Infinity) is in flight: the lock is not lost while its record stays fail-closed for ever', async () => {
    const s = scriptedClients();
    const locks = s.client();
    const lock = await locks.acquire('k');
    const extended = lock.extend(Number.POSITIVE_INFINITY);
    const updated = lock.update('x'); // renews with the infinite lease, but counts a 10 s deadline
    await extended;
    await updated;
    await s.time.advance(30_000);
    const lost = lock.signal.aborted;
    await locks.close();
    const info = await replica(s).inspect('k');
    // Either the lock is still held (and close() released it), or it was lost and the key is free.
    expect({ lost, state: info.state }).toEqual({ lost: false, state: 'free' });
  });
});
