import { describe, expect, test } from 'vitest';
import type { Lock } from '../src/index.js';
import { replica, scriptedClients } from './helpers/scripted-clients.js';

describe('close() and releases of unknown outcome', () => {
  test('fail-closed: close() does not resolve while the release it made may not have landed', async () => {
    const s = scriptedClients({ leaseMs: Number.POSITIVE_INFINITY });
    const locks = s.client();
    await locks.acquire('k');
    s.scripted.nextWrite({ kind: 'apply-late' }); // close()'s release is lost on the way
    let closed = false;
    void locks.close().then(() => (closed = true));
    await s.time.advance(10);
    const info = await replica(s).inspect('k');
    // The process exits once close() resolves: a fail-closed record left held stays held for ever.
    expect(closed && info.state === 'held').toBe(false);
  });

  test('close() does not resolve while a renewal that landed after the loss still holds the key', async () => {
    const s = scriptedClients({ leaseMs: 3_000, heartbeatMs: 1_000 });
    const locks = s.client();
    const lock = await locks.acquire('k');
    s.scripted.nextWrite({ kind: 'slow', ms: 5_000 }); // applied at once, answered 5 s later
    await s.time.advance(3_000);
    expect(lock.signal.aborted).toBe(true);
    let closed = false;
    void locks.close().then(() => (closed = true));
    await s.time.advance(10);
    const info = await replica(s).inspect('k');
    expect(closed && info.state === 'held').toBe(false);
  });
});

describe('close() while a hand-over to a local waiter is in flight', () => {
  test('the waiter does not end up holding the lock after close() resolved', async () => {
    const s = scriptedClients({ leaseMs: Number.POSITIVE_INFINITY });
    const locks = s.client();
    const first = await locks.acquire('k');
    let waiter: Lock | undefined;
    let waiterError: unknown;
    void locks.acquire('k').then(
      (l) => (waiter = l),
      (e: unknown) => (waiterError = e),
    );
    await s.time.advance(1);
    s.scripted.nextWrite({ kind: 'slow', ms: 1_000 }, (record) => record?.holder !== null); // the hand-over
    const released = first.release();
    await s.time.advance(0); // the hand-over is on the wire
    let closed = false;
    void locks.close().then(() => (closed = true));
    await s.time.until(() => closed, 5_000);
    await released;
    const info = await replica(s).inspect('k');
    expect({
      closed,
      waiterHolds: waiter?.isHeld ?? false,
      waiterRejected: waiterError !== undefined,
      state: info.state,
    }).toEqual({ closed: true, waiterHolds: false, waiterRejected: true, state: 'free' });
  });
});
