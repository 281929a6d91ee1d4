import { describe, expect, test } from 'vitest';
import { type Lock, LockStoreError } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// Writes whose outcome is unknown are reported as unknown (maybeApplied) and settled, and a
// shortening of unknown outcome makes the holder trust the earlier end. Real client, scripted
// memory store, manual time.

describe('unknown outcomes are reported as unknown and settled', () => {
  test('a claim whose answer was lost and whose re-read failed says maybeApplied, and is given back', async () => {
    const s = scriptedClients({ leaseMs: Number.POSITIVE_INFINITY });
    const locks = s.client();
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    const error = await locks.tryAcquire('k').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as LockStoreError).maybeApplied).toBe(true);
    await s.time.advance(5_000);
    await locks.close();
    expect(await replica(s).inspect('k')).toMatchObject({ state: 'free' });
  });

  test('a claim that lands after the client gave up and re-read is released, and close() waits for it', async () => {
    const s = scriptedClients({ leaseMs: Number.POSITIVE_INFINITY });
    const locks = s.client();
    s.scripted.nextWrite({ kind: 'apply-late' });
    s.scripted.nextReadFails(); // the read that would resolve it fails: the one try says so
    await expect(locks.acquire('k', { waitMs: 0 })).rejects.toMatchObject({ maybeApplied: true });
    await s.time.advance(1);
    await s.scripted.landLate();
    const closed = locks.close();
    await s.time.advance(5_000);
    await closed;
    const other = replica(s);
    const lock = await other.tryAcquire('k');
    expect(lock).not.toBeNull();
  });

  test('an update that threw but landed is not reverted by the next renewal', async () => {
    const s = scriptedClients({ heartbeatMs: 1000 });
    const locks = s.client();
    const lock = await locks.acquire('k');
    await lock.update({ v: 1 });
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    await expect(lock.update({ v: 2 })).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(2_500); // two renewals
    expect(lock.isHeld).toBe(true);
    expect(lock.data).toEqual({ v: 2 });
    await lock.release();
    expect(await replica(s).inspect('k')).toMatchObject({ state: 'free', data: { v: 2 } });
  });
});

describe('a shortening of unknown outcome makes the holder trust the earlier end', () => {
  test('extend(shorter) whose answer was lost: the lock is no longer held when another client takes over', async () => {
    const s = scriptedClients({ heartbeatMs: false });
    const lock = await s.client().acquire('k');
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    await expect(lock.extend(2_000)).rejects.toBeInstanceOf(LockStoreError);
    let taken: Lock | undefined;
    void replica(s)
      .acquire('k')
      .then((l) => (taken = l));
    expect(await s.time.until(() => taken !== undefined, 20_000)).toBe(true);
    expect(held(lock)).toBe(false);
  });

  test('a lockAtLeastMs release whose answer was lost: the same', async () => {
    const s = scriptedClients({ heartbeatMs: 1000 });
    const lock = await s.client().acquire('k', { lockAtLeastMs: 3_000 });
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    for (let i = 0; i < 20; i++) s.scripted.nextWrite({ kind: 'refused' });
    await expect(lock.release()).rejects.toBeInstanceOf(LockStoreError);
    let taken: Lock | undefined;
    void replica(s)
      .acquire('k')
      .then((l) => (taken = l));
    expect(await s.time.until(() => taken !== undefined, 20_000)).toBe(true);
    expect(held(lock)).toBe(false);
  });
});
