import { S3Client } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type Lock,
  LockClient,
  LockConfigError,
  type LockStore,
  LockStoreError,
  memoryStore,
  s3ListStore,
  s3Store,
} from '../src/index.js';

// Two LockClients on one store stand for two processes. Each runs several contenders on one
// key: without turns, the client that gets the key first hands it among its own waiters and
// the other client never gets it.

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Acquisition {
  client: number;
  token: number;
}

interface ContentionResult {
  acquisitions: Acquisition[];
  overlaps: number;
  perClient: number[];
  /** How many times the lock went from a contender of one client to one of the other. */
  crossings: number;
}

/**
 * Runs `perClient` contenders in each client, looping acquire → hold `holdMs` → release, until
 * `enough` says the counts suffice or `maxMs` passes (so a slow machine only takes longer).
 */
async function contend(
  clients: LockClient[],
  key: string,
  options: { perClient: number; holdMs: number; maxMs: number; enough: (r: ContentionResult) => boolean },
): Promise<ContentionResult> {
  const acquisitions: Acquisition[] = [];
  let inside = 0;
  let overlaps = 0;
  const stop = new AbortController();
  const deadline = setTimeout(() => stop.abort(new Error('contention window over')), options.maxMs);
  const summary = (): ContentionResult => ({
    acquisitions,
    overlaps,
    perClient: clients.map((_, index) => acquisitions.filter((a) => a.client === index).length),
    crossings: acquisitions.filter((a, i) => i > 0 && a.client !== acquisitions[i - 1]!.client).length,
  });
  const contender = async (client: LockClient, index: number) => {
    while (!stop.signal.aborted) {
      let lock: Lock;
      try {
        lock = await client.acquire(key, { signal: stop.signal });
      } catch (error) {
        if (stop.signal.aborted) return;
        throw error;
      }
      inside += 1;
      if (inside > 1) overlaps += 1;
      acquisitions.push({ client: index, token: lock.fencingToken });
      await delay(options.holdMs);
      inside -= 1;
      await lock.release();
      if (options.enough(summary())) stop.abort(new Error('enough acquisitions'));
    }
  };
  try {
    await Promise.all(
      clients.flatMap((client, index) =>
        Array.from({ length: options.perClient }, () => contender(client, index)),
      ),
    );
  } finally {
    clearTimeout(deadline);
  }
  return summary();
}

/** Two "processes" with 4 contenders each, holding ~5 ms: both get the key, again and again. */
async function expectFairContention(stores: [LockStore, LockStore], key: string): Promise<void> {
  // pollMs 50 makes turns 100 ms, so the lock must cross between clients many times a second.
  const clients = stores.map((store) => new LockClient({ store, pollMs: 50 }));
  try {
    const result = await contend(clients, key, {
      perClient: 4,
      holdMs: 5,
      maxMs: 20_000,
      enough: (r) => r.crossings >= 12 && r.perClient.every((n) => n >= 30),
    });
    expect(result.overlaps).toBe(0);
    for (let i = 1; i < result.acquisitions.length; i++) {
      expect(result.acquisitions[i]!.token).toBeGreaterThan(result.acquisitions[i - 1]!.token);
    }
    expect(result.crossings).toBeGreaterThanOrEqual(12);
    for (const count of result.perClient) expect(count).toBeGreaterThanOrEqual(30);
    // Within a turn the lock still passes among local waiters: far more acquisitions than crossings.
    expect(result.acquisitions.length).toBeGreaterThan(2 * result.crossings);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

describe('fair hand-off between clients on the memory store', () => {
  test('two clients with 4 contenders each both get the lock, and it moves between them', async () => {
    const store = memoryStore();
    await expectFairContention([store, store], 'fair/memory');
  }, 60_000);

  test('after a whole turn, a release goes to the store and a waiter of another client claims first', async () => {
    const store = memoryStore();
    // A stays away for about its pollMs (60 s) after ending a turn; B polls every 20 ms at most.
    const a = new LockClient({ store, pollMs: 60_000, localTurnMs: 100 });
    const b = new LockClient({ store, pollMs: 20 });
    const first = await a.acquire('fair/yield');
    let localWaiterSettled = false;
    const localOutcome = a.acquire('fair/yield').then(
      (lock) => lock,
      (error: unknown) => error,
    );
    void localOutcome.finally(() => {
      localWaiterSettled = true;
    });
    const remoteWaiter = b.acquire('fair/yield');
    await delay(300); // longer than A's turn
    await first.release();

    const next = await Promise.race([remoteWaiter.then(() => 'remote'), localOutcome.then(() => 'local')]);
    expect(next).toBe('remote');
    const remote = await remoteWaiter;
    expect(remote.fencingToken).toBe(first.fencingToken + 1);
    expect(localWaiterSettled).toBe(false);
    expect((await b.inspect('fair/yield')).owner).toBe(b.owner);

    // close() does not sit out the stay-away: A's waiter is rejected at once.
    await a.close();
    const outcome = await localOutcome;
    expect(outcome).toBeInstanceOf(LockStoreError);
    expect(outcome).toMatchObject({ code: 'LOCK_CLIENT_CLOSED' });
    await remote.release();
    await b.close();
  });

  test('localTurnMs: Infinity keeps the lock among local waiters, passed on token by token', async () => {
    const store = memoryStore();
    const a = new LockClient({ store, pollMs: 20, localTurnMs: Number.POSITIVE_INFINITY });
    const b = new LockClient({ store, pollMs: 20 });
    const first = await a.acquire('fair/local');
    let remoteSettled = false;
    const remoteWaiter = b.acquire('fair/local').finally(() => {
      remoteSettled = true;
    });
    const tokens = [first.fencingToken];
    // Two local contenders: whenever one releases, the other is already queued behind it.
    const contender = async (lock: Lock | null) => {
      for (let round = 0; round < 20; round++) {
        lock ??= await a.acquire('fair/local');
        if (lock !== first) tokens.push(lock.fencingToken);
        await delay(5);
        await lock.release();
        lock = null;
      }
    };
    await Promise.all([contender(first), contender(null)]);
    expect(remoteSettled).toBe(false);
    expect(tokens).toHaveLength(40);
    tokens.forEach((token, i) => {
      expect(token).toBe(first.fencingToken + i);
    });
    const remote = await remoteWaiter;
    // The other client's claim starts above the tokens reserved for local callers.
    expect(remote.fencingToken).toBeGreaterThan(first.fencingToken + 39);
    await remote.release();
    await Promise.all([a.close(), b.close()]);
  });

  test('a bad localTurnMs is refused before anything is sent', () => {
    const store = memoryStore();
    for (const bad of [0, -5, Number.NaN, '2000']) {
      expect(() => new LockClient({ store, localTurnMs: bad as number })).toThrow(LockConfigError);
      expect(() => new LockClient({ store, localTurnMs: bad as number })).toThrow(/localTurnMs/);
    }
    expect(new LockClient({ store, pollMs: 30 }).settings.localTurnMs).toBe(30);
    expect(new LockClient({ store, localTurnMs: Number.POSITIVE_INFINITY }).settings.localTurnMs).toBe(
      Number.POSITIVE_INFINITY,
    );
  });
});

describe('fair hand-off between clients on the S3 test server', () => {
  let server: S3Server;
  let plainServer: S3Server;
  const sdkClients: S3Client[] = [];
  const sdk = (target: S3Server) => {
    const client = new S3Client(target.clientConfig());
    sdkClients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startS3Server({ bucket: 'locks' });
    plainServer = await startS3Server({ bucket: 'locks', conditionalWrites: false });
  });
  afterAll(async () => {
    for (const client of sdkClients) client.destroy();
    await server?.stop();
    await plainServer?.stop();
  });

  test('two clients (each with its own S3 client) with 4 contenders each share the lock', async () => {
    const stores = [0, 1].map(() => s3Store({ client: sdk(server), bucket: 'locks', prefix: 'fair/' }));
    await expectFairContention(stores as [LockStore, LockStore], 'handoff');
  }, 60_000);

  test('the list strategy (no hand-over) gives other clients turns too', async () => {
    const clients = [0, 1].map(
      () =>
        new LockClient({
          store: s3ListStore({ client: sdk(plainServer), bucket: 'locks', prefix: 'fair/', settleMs: 30 }),
          pollMs: 50,
        }),
    );
    try {
      const result = await contend(clients, 'list', {
        perClient: 3,
        holdMs: 5,
        maxMs: 25_000,
        enough: (r) => r.crossings >= 4 && r.perClient.every((n) => n >= 6),
      });
      expect(result.overlaps).toBe(0);
      expect(result.crossings).toBeGreaterThanOrEqual(4);
      for (const count of result.perClient) expect(count).toBeGreaterThanOrEqual(6);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  }, 60_000);
});
