import { describe, expect, test } from 'vitest';
import { type LockStore, LockStoreError } from '../src/index.js';
import type { LockRecord, WriteCondition } from '../src/store.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// A write that shortens the lease (extend to a shorter lease) which the store refused: the lock
// keeps the lease it had, or, when the refusal comes only after the lowered deadline passed, is
// lost and gives its fail-closed lease back (a fail-closed key is not held for ever).

const FAIL_CLOSED = Number.POSITIVE_INFINITY;

describe('a shortening write the store certainly refused', () => {
  test('extend(finite) of a fail-closed lock, refused: the lock stays held with its old deadline', async () => {
    const s = scriptedClients({ leaseMs: FAIL_CLOSED });
    const lock = await s.client().acquire('k');
    s.scripted.nextWrite({ kind: 'refused' });
    await expect(lock.extend(1_000)).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(5_000);
    expect(held(lock)).toBe(true);
    expect(lock.expiresAt).toBeNull();
    await lock.release();
    expect((await replica(s).inspect('k')).state).toBe('free');
  });

  test('extend(shorter) of a finite lock, refused: the lock is renewed as before, not lost', async () => {
    const s = scriptedClients({ leaseMs: 10_000 });
    const lock = await s.client().acquire('k');
    s.scripted.nextWrite({ kind: 'refused' });
    await expect(lock.extend(1_000)).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(5_000);
    expect(held(lock)).toBe(true);
  });

  test('refused only after the lowered deadline passed: the lock is lost, and its fail-closed lease given back', async () => {
    const s = scriptedClients({ leaseMs: FAIL_CLOSED });
    let refuseSlowly = false;
    const inner = s.scripted.inner;
    const store: LockStore = {
      ...inner,
      write: async (key: string, record: LockRecord, condition: WriteCondition) => {
        if (!refuseSlowly) return inner.write(key, record, condition);
        refuseSlowly = false;
        await new Promise((resolve) => s.time.schedule(() => resolve(undefined), 2_000));
        throw new LockStoreError('SlowDown', { retryable: true });
      },
    };
    const locks = s.client({}, store);
    const lock = await locks.acquire('k');
    refuseSlowly = true;
    const extending = lock.extend(1_000).catch((e: unknown) => e);
    await s.time.advance(1_500); // the lowered deadline passes while the write is on its way
    expect(held(lock)).toBe(false);
    await s.time.advance(1_000); // refused: the store still holds the fail-closed lease
    // Told at the deadline: the lock is lost, and the change it asked for may still land then.
    expect(await extending).toMatchObject({ name: 'LockLostError', maybeApplied: true });
    await s.time.advance(1_000);
    await locks.close();
    expect((await replica(s).inspect('k')).state).toBe('free');
  });
});
