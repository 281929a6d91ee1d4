import { S3Client } from '@aws-sdk/client-s3';
import { type S3PersonalityName, type S3Server, startS3Server } from '@latch/testing';
import { afterAll, describe, expect, it } from 'vitest';
import {
  LockClient,
  LockConfigError,
  type LockEvent,
  type LockStore,
  LockStoreError,
  LockStoreUnsafeError,
  memoryStore,
  type StoreVerdict,
  s3ListStore,
  s3Store,
  VERIFY_KEY_PREFIX,
  verifyStore,
} from '../src/index.js';
import { countRequests } from './helpers/count-requests.js';

// verifyStore against the local S3 server as AWS S3 behaves and as each S3-compatible store the
// server can imitate; then the same probe run by a LockClient on first use (s3Store's `verify`).

const BUCKET = 'verify-me';
const servers: S3Server[] = [];
const clients: S3Client[] = [];

async function storeLike(personality?: S3PersonalityName, verify?: boolean) {
  const server = await startS3Server({ bucket: BUCKET, ...(personality ? { personality } : {}) });
  servers.push(server);
  const client = new S3Client(server.clientConfig());
  clients.push(client);
  const store = s3Store({
    client,
    bucket: BUCKET,
    prefix: 'locks/',
    ...(verify === undefined ? {} : { verify }),
  });
  return { server, client, store };
}

afterAll(async () => {
  for (const client of clients) client.destroy();
  await Promise.all(servers.map((server) => server.stop()));
});

const outcomes = (verdict: StoreVerdict) =>
  Object.fromEntries(verdict.checks.map((check) => [check.name, check.outcome]));

describe('verifyStore', () => {
  it('passes a store that behaves as AWS S3 does, leaves nothing behind, and says what it cost', async () => {
    const { server, client, store } = await storeLike();
    const counter = countRequests(client);
    const verdict = await verifyStore(store);
    expect(verdict.safe).toBe(true);
    expect(outcomes(verdict)).toEqual({
      'create-once': 'passed',
      'read-after-write': 'passed',
      'version-changes': 'passed',
      'replace-current': 'passed',
      'replace-stale': 'passed',
      'delete-stale': 'passed',
      'claim-once': 'skipped',
    });
    // The probe's requests, cleanup included, as the verdict counts them and as they went out.
    expect(verdict.requests).toBe(counter.count);
    expect(verdict.requests).toBe(14);
    server.resetRequestLog();
    expect(await store.read(`${VERIFY_KEY_PREFIX}anything`)).toBeNull();
    const left = await store.list!(VERIFY_KEY_PREFIX);
    expect(left.keys).toEqual([]);
  });

  it.each([
    ['ignores-if-none-match-on-put', 'create-once', 'failed', false],
    ['ignores-if-match-on-put', 'replace-stale', 'failed', false],
    ['no-conditional-writes', 'create-once', 'refused', false],
    ['eventually-consistent', 'read-after-write', 'failed', false],
    // Latch never deletes a lock record: told, but the store stays usable.
    ['ignores-if-match-on-delete', 'delete-stale', 'failed', true],
  ] as const)('%s: %s is %s, and the store is safe: %s', async (personality, check, outcome, safe) => {
    const { store } = await storeLike(personality);
    const verdict = await verifyStore(store);
    expect(outcomes(verdict)[check]).toBe(outcome);
    expect(verdict.safe).toBe(safe);
    const failing = verdict.checks.filter((c) => c.outcome !== 'passed' && c.outcome !== 'skipped');
    expect(failing.map((c) => c.name)).toEqual([check]);
  });

  it('s3ListStore: checks its listings instead (order, after a write, after a delete) and a read', async () => {
    const plain = await startS3Server({ bucket: BUCKET, conditionalWrites: false });
    servers.push(plain);
    const s3 = new S3Client(plain.clientConfig());
    clients.push(s3);
    const verdict = await verifyStore(s3ListStore({ client: s3, bucket: BUCKET, prefix: 'locks/' }));
    expect(verdict).toMatchObject({ store: 's3-list', safe: true, requests: 13 });
    expect(outcomes(verdict)).toEqual({
      'list-after-write': 'passed',
      'list-order': 'passed',
      'read-after-write': 'passed',
      'list-after-delete': 'passed',
    });
    expect(
      plain.requestLog.every(
        (entry) => entry.key === undefined || entry.key.startsWith(`locks/${VERIFY_KEY_PREFIX}`),
      ),
    ).toBe(true);
    const stale = await startS3Server({ bucket: BUCKET, personality: 'eventually-consistent' });
    servers.push(stale);
    const staleSdk = new S3Client(stale.clientConfig());
    clients.push(staleSdk);
    const staleVerdict = await verifyStore(s3ListStore({ client: staleSdk, bucket: BUCKET }));
    expect(staleVerdict.safe).toBe(false);
    expect(outcomes(staleVerdict)['read-after-write']).toBe('failed');
    const unordered = await startS3Server({
      bucket: BUCKET,
      conditionalWrites: false,
      personality: { unorderedListings: true },
    });
    servers.push(unordered);
    const unorderedSdk = new S3Client(unordered.clientConfig());
    clients.push(unorderedSdk);
    const unorderedVerdict = await verifyStore(s3ListStore({ client: unorderedSdk, bucket: BUCKET }));
    expect(unorderedVerdict.safe).toBe(false);
    expect(outcomes(unorderedVerdict)['list-order']).toBe('failed');
  });

  it('refuses what is not a store, and an unknown option, before any request', () => {
    expect(() => verifyStore({} as never)).toThrow(LockConfigError);
    expect(() => verifyStore(memoryStore(), { clok: 'trusted' } as never)).toThrow(/did you mean clock/);
  });

  it('a probe write whose answer is lost judges nothing: the acquire waits it out and the probe runs again', async () => {
    const inner = memoryStore();
    let answersToLose = 1;
    const store: LockStore = {
      ...inner,
      verifyScope: async () => 'a memory store that loses answers',
      write: async (key, record, condition) => {
        const outcome = await inner.write(key, record, condition);
        if (key.startsWith(VERIFY_KEY_PREFIX) && answersToLose-- > 0) {
          throw new LockStoreError('request timed out', { retryable: true, maybeApplied: true });
        }
        return outcome;
      },
    };
    const alone = await verifyStore(store).catch((e: unknown) => e);
    expect(alone).toBeInstanceOf(LockStoreError);
    expect(alone).not.toBeInstanceOf(LockStoreUnsafeError);
    expect((alone as LockStoreError).retryable).toBe(true);
    answersToLose = 1;
    const events: LockEvent[] = [];
    const client = new LockClient({
      store,
      retry: { baseMs: 1, maxMs: 5 },
      pollMs: 10,
      onEvent: (e) => events.push(e),
    });
    const lock = await client.acquire('invoices', { waitMs: 10_000 });
    expect(lock.isHeld).toBe(true);
    expect(events.some((e) => e.type === 'storeFailed')).toBe(true);
    await lock.release();
    await client.close();
  });

  it('credentials that may not delete (locks need no delete) leave the store safe, delete-stale skipped', async () => {
    const inner = memoryStore();
    const store: LockStore = {
      ...inner,
      delete: async () => {
        throw new LockStoreError('Access Denied', { retryable: false, reason: 'denied' });
      },
    };
    const verdict = await verifyStore(store);
    expect(verdict.safe).toBe(true);
    expect(outcomes(verdict)['delete-stale']).toBe('skipped');
  });

  it('passes the memory store, which states no clock', async () => {
    const verdict = await verifyStore(memoryStore());
    expect(verdict.safe).toBe(true);
    expect(verdict.clock).toBeUndefined();
  });
});

describe('the clock check', () => {
  const skewed = (offsetMs: number) => ({
    now: () => Date.now() + offsetMs,
    monotonic: () => performance.now(),
  });

  it('warns when the client clock is further from the store than its trusted tolerance', async () => {
    const { store } = await storeLike();
    const verdict = await verifyStore(store, { clock: { toleranceMs: 1000, time: skewed(5_000) } });
    expect(verdict.clock?.beyondTolerance).toBe(true);
    expect(verdict.clock?.offsetMs.high).toBeLessThan(-1000);
    expect(verdict.clock?.detail).toMatch(/beyond clock.toleranceMs 1000/);
  });

  it('does not warn within tolerance, nor in the untrusted mode', async () => {
    const { store } = await storeLike();
    const within = await verifyStore(store, { clock: { toleranceMs: 3000, time: skewed(500) } });
    expect(within.clock?.beyondTolerance).toBe(false);
    const untrusted = await verifyStore(store, { clock: { mode: 'untrusted', time: skewed(60_000) } });
    expect(untrusted.clock?.beyondTolerance).toBe(false);
  });
});

describe('a LockClient checks a store that is not AWS S3 before its first lock', () => {
  it('refuses to acquire on a store that ignores If-None-Match, before any lock is taken', async () => {
    const { server, store } = await storeLike('ignores-if-none-match-on-put');
    const client = new LockClient({ store, leaseMs: 5_000 });
    const error = await client.acquire('invoices').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreUnsafeError);
    expect((error as LockStoreUnsafeError).message).toMatch(/create-once.*ignores If-None-Match/s);
    expect(await client.tryAcquire('invoices').catch((e: unknown) => e)).toBeInstanceOf(LockStoreUnsafeError);
    // No lock record was written: only the probe's keys were touched.
    const touched = server.requestLog.filter((entry) => entry.op === 'PutObject').map((entry) => entry.key);
    expect(touched.every((key) => key?.startsWith(`locks/${VERIFY_KEY_PREFIX}`))).toBe(true);
    await client.close();
  });

  it('an endpoint set by AWS_ENDPOINT_URL is not AWS either: the default checks it', async () => {
    const { server } = await storeLike('ignores-if-none-match-on-put');
    const saved = process.env.AWS_ENDPOINT_URL;
    process.env.AWS_ENDPOINT_URL = server.endpoint;
    const { endpoint: _endpoint, ...noEndpoint } = server.clientConfig();
    const s3 = new S3Client(noEndpoint);
    clients.push(s3);
    const client = new LockClient({ store: s3Store({ client: s3, bucket: BUCKET }) });
    try {
      await expect(client.tryAcquire('invoices')).rejects.toBeInstanceOf(LockStoreUnsafeError);
    } finally {
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL;
      else process.env.AWS_ENDPOINT_URL = saved;
      await client.close();
    }
  });

  it('without the check (verify: false) two clients both hold the same lock there', async () => {
    const { store } = await storeLike('ignores-if-none-match-on-put', false);
    const first = new LockClient({ store, leaseMs: 5_000 });
    const second = new LockClient({ store, leaseMs: 5_000 });
    const [a, b] = await Promise.all([first.tryAcquire('invoices'), second.tryAcquire('invoices')]);
    expect(a?.isHeld && b?.isHeld).toBe(true);
    await Promise.allSettled([a?.release(), b?.release()]);
    await Promise.all([first.close(), second.close()]);
  });

  it('on a store that behaves, it checks once per bucket and prefix, then locks as usual', async () => {
    const { server, client: s3, store } = await storeLike(undefined, true);
    const counter = countRequests(s3);
    const events: LockEvent[] = [];
    const first = new LockClient({ store, leaseMs: 5_000, onEvent: (e) => events.push(e) });
    const lock = await first.acquire('invoices');
    const probe = counter.count - 1; // the acquire's own write
    expect(probe).toBe(14);
    await lock.release();
    const second = new LockClient({ store, leaseMs: 5_000 });
    server.resetRequestLog();
    await (await second.acquire('invoices')).release();
    // No second probe: every request of the second client is about the lock itself.
    expect(server.requestLog.length).toBeGreaterThan(0);
    expect(server.requestLog.every((entry) => entry.key === 'locks/invoices')).toBe(true);
    expect(events.some((e) => e.type === 'clockSkew')).toBe(false);
    await Promise.all([first.close(), second.close()]);
  });

  it('a missing bucket fails the first acquire with the clear store error after one request, and is not remembered', async () => {
    const { server } = await storeLike();
    const s3 = new S3Client(server.clientConfig());
    clients.push(s3);
    const client = new LockClient({ store: s3Store({ client: s3, bucket: 'no-such-bucket' }) });
    server.resetRequestLog();
    const error = await client.acquire('invoices', { waitMs: 60_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).not.toBeInstanceOf(LockStoreUnsafeError);
    expect((error as LockStoreError).retryable).toBe(false);
    expect((error as Error).message).toMatch(/^S3 GetObject for lock "invoices" failed: .*no-such-bucket/);
    expect(server.requestLog.length).toBe(1);
    // Not a verdict: the next acquire checks again.
    await client.tryAcquire('invoices').catch(() => null);
    expect(server.requestLog.length).toBe(2);
    await client.close();
  });

  it('reports a clock beyond the trusted tolerance as an event, and still locks', async () => {
    const { store } = await storeLike(undefined, true);
    const events: LockEvent[] = [];
    const time = { now: () => Date.now() - 10_000, monotonic: () => performance.now() };
    const client = new LockClient({
      store,
      leaseMs: 5_000,
      clock: { toleranceMs: 500, time },
      onEvent: (e) => events.push(e),
    });
    const lock = await client.acquire('invoices');
    const skew = events.find((e) => e.type === 'clockSkew');
    expect(skew).toMatchObject({ type: 'clockSkew', key: 'invoices', toleranceMs: 500 });
    expect(lock.isHeld).toBe(true);
    await lock.release();
    await client.close();
  });
});
