import { describe, expect, test } from 'vitest';
import type { ListBucket } from '../src/engine/list/list-bucket.js';
import { entryKey } from '../src/engine/list/list-entries.js';
import { ListLeaseEngine } from '../src/engine/list/list-lease-engine.js';
import { type LockEvent, LockStoreError } from '../src/index.js';
import { resolveClock } from '../src/shared/clock.js';
import { resolveRetry } from '../src/shared/retry.js';
import { replica, scriptedClients } from './helpers/scripted-clients.js';

// Writes that landed after their lock ended, or landed unseen: what is released, and what is
// reported. Real client (and the list strategy's engine), scripted memory store, manual time.

describe('writes that landed late or unseen', () => {
  test('a renewal that lands after the loss timer fired is released, not left renewed', async () => {
    const s = scriptedClients({ leaseMs: 3_000, heartbeatMs: 1_000 });
    const lock = await s.client().acquire('k');
    s.scripted.nextWrite({ kind: 'slow', ms: 5_000 });
    await s.time.advance(3_000);
    expect(lock.signal.aborted).toBe(true);
    await s.time.advance(5_000);
    expect(await replica(s).inspect('k')).toMatchObject({ state: 'free' });
  });

  test('our own release that landed unseen is reported as released, not lost', async () => {
    const events: LockEvent['type'][] = [];
    const s = scriptedClients({ onEvent: (event) => events.push(event.type) });
    const lock = await s.client().acquire('k');
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    await expect(lock.release()).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(1_000);
    expect(events).toContain('released');
    expect(events).not.toContain('lost');
  });

  test('forceRelease says true when its write landed and the retry met a failed condition', async () => {
    const s = scriptedClients();
    await replica(s).acquire('k');
    s.scripted.nextWrite({ kind: 'conflict-after-apply' });
    expect(await s.client().forceRelease('k')).toBe(true);
  });

  test('the list strategy forceRelease also deletes a renewal uploaded while it deleted', async () => {
    const objects = new Map<string, string>();
    let renewDuringDelete: (() => void) | undefined;
    const bucket: ListBucket = {
      checkName: () => undefined,
      put: async (key, body) => void objects.set(key, body),
      list: async (prefix) => [...objects.keys()].filter((key) => key.startsWith(prefix)).sort(),
      get: async (key) => objects.get(key) ?? null,
      delete: async (key) => {
        objects.delete(key);
        renewDuringDelete?.();
        renewDuringDelete = undefined;
      },
    };
    const engine = new ListLeaseEngine(
      bucket,
      { clock: resolveClock(undefined), retry: resolveRetry(undefined), owner: 'a' },
      10,
    );
    const result = await engine.claim('k', { lockId: 'unused', terms: { leaseMs: 60_000 } });
    const lease = result.lease!;
    const [objectKey, body] = [...objects][0]!;
    // The holder, in another process, uploads its renewal (same place in the queue, later expiry).
    renewDuringDelete = () =>
      objects.set(entryKey('k', lease.record.token, lease.lockId, lease.record.token + 90_000), body);
    expect(objectKey).toBe(lease.version);
    expect(await engine.forceRelease('k')).not.toBeNull();
    expect(await engine.read('k')).toBeNull();
  });
});
