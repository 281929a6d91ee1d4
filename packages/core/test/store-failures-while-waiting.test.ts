import { createServer } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import {
  LockClient,
  type LockEvent,
  LockStoreError,
  LockTimeoutError,
  memoryStore,
  s3Store,
} from '../src/index.js';
import { failingStore } from './helpers/failing-store.js';
import { ManualTime } from './helpers/manual-time.js';
import { telemetryHarness } from './helpers/telemetry-harness.js';

// A waiting acquire on a store that keeps failing: every failed try is an event, and with
// default options it rejects with the store's error once the failures have lasted
// storeErrorWaitMs (20 s), instead of retrying for ever (a wrong endpoint used to hang a
// waiting acquire with no error, log line or event).

const down = () => new LockStoreError('connect ECONNREFUSED', { retryable: true, reason: 'unavailable' });

test('with default options, a waiting acquire rejects with the store error once failures have lasted 20 s, each try an event', async () => {
  const time = new ManualTime();
  const { store, state } = failingStore(down);
  const events: LockEvent[] = [];
  const otel = telemetryHarness();
  const locks = new LockClient({
    store,
    clock: { time: time.scheduler() },
    onEvent: (e) => events.push(e),
    telemetry: otel.telemetry,
  });
  let outcome: unknown;
  locks.acquire('report:daily').then(
    () => (outcome = 'acquired'),
    (error: unknown) => (outcome = error),
  );
  await time.advance(19_000);
  expect(outcome).toBeUndefined(); // still trying: a network blip of this length is ridden out
  await time.until(() => outcome !== undefined, 10_000);
  expect(outcome).toBeInstanceOf(LockStoreError);
  expect((outcome as Error).message).toMatch(/ECONNREFUSED/);
  expect(time.elapsed).toBeGreaterThanOrEqual(20_000);
  expect(time.elapsed).toBeLessThan(25_000);

  const failed = events.filter((event) => event.type === 'storeFailed');
  // Every failed try, and nothing else: a try is one claim, sent once (the poller's backoff
  // paces the next one).
  expect(failed.length).toBeGreaterThan(1);
  expect(state.requests).toBe(failed.length);
  expect(failed.map((event) => event.failures)).toEqual(failed.map((_, index) => index + 1));
  expect(failed.at(-1)?.retryInMs).toBeUndefined(); // the last one says the waiters gave up
  expect(failed.slice(0, -1).every((event) => (event.retryInMs ?? 0) > 0)).toBe(true);
  expect(failed.every((event) => event.key === 'report:daily' && event.error instanceof LockStoreError)).toBe(
    true,
  );
  // Telemetry counts each failed request, and the acquire span ends as a store error.
  expect(await otel.sum('latch.store.requests', { 'latch.store.outcome': 'error' })).toBe(state.requests);
  const [attempt] = otel.spans('latch.acquire');
  expect(attempt?.attributes['latch.acquire.outcome']).toBe('store_error');
});

test('an answer ends the streak: a store that fails on and off is waited on for as long as waitMs says', async () => {
  const time = new ManualTime();
  const shared = memoryStore();
  // Down for 2 s, then up for 3 s (longer than any pause between two tries), and so on.
  const { store } = failingStore(() => (time.elapsed % 5_000 < 2_000 ? down() : undefined), shared);
  // One request per try, so that the poller meets each failure itself.
  const retry = { attempts: 1 };
  const locks = new LockClient({ store, retry, storeErrorWaitMs: 5_000, clock: { time: time.scheduler() } });
  const other = new LockClient({ store: shared, clock: { time: time.scheduler() }, leaseMs: 600_000 });
  const held = await other.acquire('busy');
  let outcome: unknown;
  locks.acquire('busy', { waitMs: 30_000 }).then(
    () => (outcome = 'acquired'),
    (error: unknown) => (outcome = error),
  );
  await time.until(() => outcome !== undefined, 40_000, 100);
  expect(outcome).toBeInstanceOf(LockTimeoutError); // not the store's error: it answered often enough
  expect(time.elapsed).toBeGreaterThanOrEqual(30_000);
  await held.release().catch(() => undefined);
});

test('throttling is not a failure: no event, and the wait goes on past storeErrorWaitMs', async () => {
  const time = new ManualTime();
  const throttled = () =>
    new LockStoreError('SlowDown: reduce your request rate', { retryable: true, reason: 'throttled' });
  const { store } = failingStore(throttled);
  const events: LockEvent[] = [];
  const locks = new LockClient({
    store,
    storeErrorWaitMs: 1_000,
    clock: { time: time.scheduler() },
    onEvent: (e) => events.push(e),
  });
  let outcome: unknown;
  locks.acquire('busy', { waitMs: 5_000 }).then(
    () => (outcome = 'acquired'),
    (error: unknown) => (outcome = error),
  );
  await time.until(() => outcome !== undefined, 10_000, 100);
  expect(outcome).toBeInstanceOf(LockTimeoutError);
  expect(events.filter((event) => event.type === 'storeFailed')).toEqual([]);
});

test('storeErrorWaitMs is checked like every duration, and Infinity waits as long as waitMs', () => {
  const store = memoryStore();
  expect(() => new LockClient({ store, storeErrorWaitMs: -1 })).toThrow(/storeErrorWaitMs/);
  expect(
    new LockClient({ store, storeErrorWaitMs: Number.POSITIVE_INFINITY }).settings.storeErrorWaitMs,
  ).toBe(Number.POSITIVE_INFINITY);
  expect(new LockClient({ store }).settings.storeErrorWaitMs).toBe(20_000);
});

test('a wrong endpoint, tried as a new user would: acquire rejects with the store error instead of hanging', async () => {
  // A port nothing listens on: every request is refused.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const client = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    maxAttempts: 1, // the SDK's own retries would only make the test slower
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const events: LockEvent[] = [];
  const locks = new LockClient({
    store: s3Store({ client, bucket: 'locks' }),
    storeErrorWaitMs: 300,
    onEvent: (e) => events.push(e),
  });
  const error = await locks.withLock('deploy', () => 'ran').catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(LockStoreError);
  expect(events.some((event) => event.type === 'storeFailed')).toBe(true);
  await locks.close();
  client.destroy();
});
