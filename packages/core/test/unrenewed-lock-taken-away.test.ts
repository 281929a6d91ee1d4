import { describe, expect, test } from 'vitest';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// Locks nothing renews (heartbeatMs: false, fail-closed) still learn that their lease was taken
// away. Real client, scripted memory store, manual time.

describe('locks nothing renews learn that they were taken away', () => {
  test.each([
    ['fail-closed', { leaseMs: Number.POSITIVE_INFINITY }],
    ['heartbeatMs: false', { heartbeatMs: false as const }],
  ])('%s: forceRelease elsewhere aborts the signal within 5 polls', async (_name, options) => {
    const s = scriptedClients(options);
    const lock = await s.client().acquire('k');
    expect(await replica(s).forceRelease('k')).toBe(true);
    await s.time.advance(5 * 200 + 50);
    expect(lock.signal.aborted).toBe(true);
  });

  test('a release by handle in another client aborts a fail-closed lock', async () => {
    const s = scriptedClients({ leaseMs: Number.POSITIVE_INFINITY });
    const lock = await s.client().acquire('k');
    await replica(s).release('k', lock.handle);
    await s.time.advance(5 * 200 + 50);
    expect(lock.isHeld).toBe(false);
  });

  test.each([
    ['fail-closed', { leaseMs: Number.POSITIVE_INFINITY }],
    ['heartbeatMs: false', { heartbeatMs: false as const }],
  ])('%s: the old lock aborts within 5 polls once another client resumed it', async (_n, options) => {
    const s = scriptedClients(options);
    const old = await s.client().acquire('k');
    const resumed = await replica(s).resume(old.handle);
    expect(held(resumed)).toBe(true);
    await s.time.advance(5 * 200 + 50);
    expect(held(old) && held(resumed)).toBe(false);
  });
});
