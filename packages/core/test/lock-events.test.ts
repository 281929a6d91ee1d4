import { expect, test } from 'vitest';
import { LockClient, type LockEvent, LockLostError, LockTimeoutError, memoryStore } from '../src/index.js';

/** A client whose events land in `events`, in order. */
function recordingClient(store: ReturnType<typeof memoryStore>, owner: string, leaseMs = 1000) {
  const events: LockEvent[] = [];
  const client = new LockClient({ store, owner, leaseMs, pollMs: 20, onEvent: (e) => events.push(e) });
  return { client, events, types: () => events.map((e) => `${e.type}:${e.key}`) };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}

test('an acquire that finds the key free reports no waiting; one behind a local holder does', async () => {
  const a = recordingClient(memoryStore(), 'a');
  const first = await a.client.acquire('k');
  const second = a.client.acquire('k');
  await until(() => a.types().includes('waiting:k'));
  await first.release();
  await (await second).release();
  expect(a.types()).toEqual(['acquired:k', 'waiting:k', 'released:k', 'acquired:k', 'released:k']);
});

test('acquire, renew and release are reported with owner, token and expiry', async () => {
  const store = memoryStore();
  const a = recordingClient(store, 'replica-a');
  const lock = await a.client.acquire('report', { context: 'nightly' });
  await until(() => a.events.some((e) => e.type === 'renewed'));
  await lock.release();

  const [acquired] = a.events;
  expect(acquired).toMatchObject({
    type: 'acquired',
    key: 'report',
    owner: 'replica-a',
    fencingToken: lock.fencingToken,
    context: 'nightly',
  });
  expect(acquired?.type === 'acquired' && typeof acquired.expiresAt).toBe('number');
  const renewed = a.events.find((e) => e.type === 'renewed');
  expect(renewed).toMatchObject({ fencingToken: lock.fencingToken, owner: 'replica-a' });
  expect(a.events.at(-1)).toMatchObject({ type: 'released', key: 'report', fencingToken: lock.fencingToken });
  for (const event of a.events) expect(typeof event.at).toBe('number');
});

test('a busy tryAcquire, a wait that times out and an aborted wait are reported as contended', async () => {
  const store = memoryStore();
  const holder = recordingClient(store, 'holder');
  const other = recordingClient(store, 'other');
  const lock = await holder.client.acquire('invoice:7');

  expect(await other.client.tryAcquire('invoice:7')).toBeNull();
  await expect(other.client.acquire('invoice:7', { waitMs: 60 })).rejects.toBeInstanceOf(LockTimeoutError);
  const abort = new AbortController();
  const waiting = other.client.acquire('invoice:7', { signal: abort.signal });
  await until(() => other.events.filter((e) => e.type === 'waiting').length === 2);
  abort.abort(new Error('shutting down'));
  await expect(waiting).rejects.toThrow('shutting down');

  expect(other.types()).toEqual([
    'contended:invoice:7',
    'waiting:invoice:7',
    'contended:invoice:7',
    'waiting:invoice:7',
    'contended:invoice:7',
  ]);
  const reasons = other.events.flatMap((e) => (e.type === 'contended' ? [e.reason] : []));
  expect(reasons).toEqual(['busy', 'timeout', 'aborted']);
  const busy = other.events[0];
  expect(busy?.type === 'contended' && busy.holder?.owner).toBe('holder');
  await lock.release();
});

test('a stolen lock is reported lost with its error', async () => {
  const store = memoryStore();
  const a = recordingClient(store, 'a', 1000);
  const lock = await a.client.acquire('job');
  await new LockClient({ store }).forceRelease('job');
  await until(() => !lock.isHeld);

  const lost = a.events.find((e) => e.type === 'lost');
  expect(lost).toMatchObject({ type: 'lost', key: 'job', fencingToken: lock.fencingToken });
  expect(lost?.type === 'lost' && lost.error).toBeInstanceOf(LockLostError);
  expect(a.events.some((e) => e.type === 'released')).toBe(false);
});

test('a listener that throws does not disturb locking', async () => {
  const client = new LockClient({
    store: memoryStore(),
    onEvent: () => {
      throw new Error('dashboard down');
    },
  });
  const lock = await client.acquire('k');
  await lock.release();
  expect(lock.isHeld).toBe(false);
  expect(() => new LockClient({ store: memoryStore(), onEvent: 'log' as never })).toThrow(
    /onEvent must be a function/,
  );
});
