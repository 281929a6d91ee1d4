import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBLocal, type S3Server, startDynamoDBLocal, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { VersionedRecord } from '../../src/contract/lock-record.js';
import type { ClaimRequest, LockStore } from '../../src/contract/lock-store.js';
import { WriterDriver } from '../../src/engine/cas/writer-driver.js';
import { dynamoStore, ensureLockTable, memoryStore, s3Store } from '../../src/index.js';
import { LockStoreError } from '../../src/shared/errors.js';
import { systemScheduler } from '../../src/shared/scheduler.js';

// The writer state machine driven against real stores (memory, the local S3 server and DynamoDB
// Local through the AWS SDK): several writers contend for one key, with answers lost after the
// write (or DynamoDB's one-request claim) applied.

const BUCKET = 'latch-writer-driver';
const local = { region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } };
let server: S3Server;
let client: S3Client;
let ddb: DynamoDBLocal;
let sdk: DynamoDBClient;

beforeAll(async () => {
  [server, ddb] = await Promise.all([startS3Server({ bucket: BUCKET }), startDynamoDBLocal()]);
  client = new S3Client({ ...local, endpoint: server.endpoint, forcePathStyle: true });
  sdk = new DynamoDBClient({ ...local, endpoint: ddb.endpoint });
  await ensureLockTable(sdk, { table: 'locks' });
}, 60_000);

afterAll(async () => {
  client?.destroy();
  sdk?.destroy();
  await Promise.all([server?.stop(), ddb?.stop()]);
});

/** A store whose writes land but whose answers are lost, the first `count` times (per writer id prefix). */
function losingAnswers(store: LockStore, count: number): LockStore {
  const lost = new Map<string, number>();
  /** Whether the answer to this write of `writeId`'s writer is lost. */
  const loses = (writeId: string) => {
    const writer = writeId.split(':')[0]!;
    const n = lost.get(writer) ?? 0;
    lost.set(writer, n + 1);
    return n < count;
  };
  const lostAnswer = () =>
    new LockStoreError('the answer was lost', { retryable: true, maybeApplied: true, reason: 'unavailable' });
  const wrapped: Partial<LockStore> = {
    async write(key, record, condition) {
      const outcome = await store.write(key, record, condition);
      if (loses(record.writeId)) throw lostAnswer();
      return outcome;
    },
  };
  if (store.claim) {
    const claim = store.claim.bind(store);
    wrapped.claim = async (key: string, request: ClaimRequest) => {
      const outcome = await claim(key, request);
      if (loses(request.record.writeId)) throw lostAnswer();
      return outcome;
    };
  }
  return Object.assign(Object.create(store) as LockStore, wrapped);
}

const expired = (current: VersionedRecord) => {
  const holder = current.record.holder;
  return holder?.expiresAt != null && holder.expiresAt < Date.now();
};

function driver(
  store: LockStore,
  key: string,
  n: number,
  options: { limit?: number; leaseMs?: number | null; claimBy?: 'version' | 'state' } = {},
) {
  return new WriterDriver({
    store,
    key,
    lockId: `L${n}-${randomUUID().slice(0, 8)}`,
    writer: `w${n}${randomUUID().slice(0, 8)}`,
    owner: `test:${n}`,
    terms: {
      leaseMs: options.leaseMs === undefined ? 10_000 : options.leaseMs,
      claimBy: options.claimBy ?? 'version',
      marginMs: 1_000,
      retryMs: 15,
    },
    limit: options.limit ?? 1,
    time: systemScheduler,
    claimable: expired,
  });
}

/** Three writers, three rounds each, on one key: one inside at a time, rising tokens, the last data stored, the key free at the end. */
async function takeTurns(store: LockStore, claimBy: 'version' | 'state') {
  const key = 'turns';
  let inside = 0;
  let most = 0;
  const tokens: number[] = [];
  const run = async (n: number) => {
    for (let round = 0; round < 3; round++) {
      const writer = driver(store, key, n, { claimBy });
      tokens.push(await writer.acquire());
      inside++;
      most = Math.max(most, inside);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inside--;
      // A release whose answer was lost is told so at once, and settled in the background.
      await writer.release({ by: n, round }).catch((error: unknown) => {
        if (!(error instanceof LockStoreError && error.maybeApplied)) throw error;
      });
      expect(await writer.ended).toBe('released');
    }
  };
  await Promise.all([run(1), run(2), run(3)]);
  expect(most).toBe(1);
  expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
  expect(new Set(tokens).size).toBe(9);
  const last = await store.read(key);
  expect(last?.record.holder).toBeNull();
  expect(last?.record.data).toMatchObject({ round: 2 });
}

test('on DynamoDB Local, writers claiming in one request take turns, their first claim answers lost', async () => {
  const store = dynamoStore({ client: sdk, table: 'locks' });
  await takeTurns(losingAnswers(store, 1), 'state');
}, 60_000);

const stores: [string, () => LockStore][] = [
  ['memory', () => memoryStore()],
  ['s3', () => s3Store({ client, bucket: BUCKET, prefix: `${randomUUID()}/` })],
];

describe.each(stores)('on the %s store', (_name, makeStore) => {
  test('three writers take turns: one inside at a time, rising tokens, the last data stored, the key free at the end', async () => {
    await takeTurns(losingAnswers(makeStore(), 2), 'version');
  }, 30_000);

  test('a fail-closed claim whose answer was lost, given up on: the key is given back', async () => {
    const store = losingAnswers(makeStore(), 1);
    const writer = driver(store, 'given-back', 1, { leaseMs: null });
    const acquired = writer.acquire();
    writer.giveUp();
    await expect(acquired).rejects.toThrow(/gaveUp|released/);
    expect(await writer.ended).toBe('released');
    expect((await store.read('given-back'))?.record.holder).toBeNull();
    // Another writer gets it at once.
    const next = driver(store, 'given-back', 2, { leaseMs: null });
    expect(await next.acquire()).toBe(2);
    await next.release();
  }, 10_000);

  test('a semaphore of limit 2: at most two inside, each slot its own', async () => {
    const store = losingAnswers(makeStore(), 1);
    let inside = 0;
    let most = 0;
    const run = async (n: number) => {
      for (let round = 0; round < 2; round++) {
        const writer = driver(store, 'slots', n, { limit: 2 });
        await writer.acquire();
        inside++;
        most = Math.max(most, inside);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inside--;
        await writer.release();
      }
    };
    await Promise.all([run(1), run(2), run(3), run(4)]);
    expect(most).toBeLessThanOrEqual(2);
    expect((await store.read('slots'))?.record.holders).toEqual([]);
  }, 30_000);

  test('a holder hands over to a waiting writer in one write: the waiter gets the next token, and releases it', async () => {
    const inner = makeStore();
    let writes = 0;
    const store: LockStore = Object.assign(Object.create(inner) as LockStore, {
      write: (...args: Parameters<LockStore['write']>) => {
        writes++;
        return inner.write(...args);
      },
    });
    const [a, b] = [1, 2].map((n) => driver(store, 'handed', n));
    const first = await a!.acquire();
    const second = b!.acquire();
    await new Promise((resolve) => setTimeout(resolve, 40)); // b looks, finds it held, waits
    const before = writes;
    await a!.handOver(b!, { step: 1 });
    expect(await second).toBe(first + 1);
    expect(writes - before).toBe(1); // the hand-over is the only write: b did not claim
    expect(await a!.ended).toBe('handedOver');
    const record = (await store.read('handed'))!.record;
    expect(record.holder?.lockId).toMatch(/^L2-/); // the waiter's acquisition
    expect(record.data).toEqual({ step: 1 });
    await b!.release();
    expect((await store.read('handed'))?.record.holder).toBeNull();
  }, 10_000);

  test('a waiter that gave up before the hand-over reached it gives the lease back', async () => {
    const store = makeStore();
    const [a, b] = [1, 2].map((n) => driver(store, 'handed-back', n));
    await a!.acquire();
    const second = b!.acquire();
    second.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 40));
    b!.giveUp();
    await a!.handOver(b!);
    expect(await a!.ended).toBe('handedOver');
    await expect(second).rejects.toThrow();
    // b gives back the lease it was handed: the key is free, and a third writer takes it.
    const c = driver(store, 'handed-back', 3);
    expect(await c.acquire()).toBeGreaterThan(1);
    await c.release();
  }, 10_000);

  test('a semaphore of limit 2: a third waits while two hold, and gets a slot when one is released', async () => {
    const store = losingAnswers(makeStore(), 1);
    const [a, b, c] = [1, 2, 3].map((n) => driver(store, 'full', n, { limit: 2 }));
    await a!.acquire();
    await b!.acquire();
    let third = false;
    const acquired = c!.acquire().then(() => {
      third = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 60)); // c looks several times meanwhile
    expect(third).toBe(false);
    await a!.release();
    await acquired;
    await Promise.all([b!.release(), c!.release()]);
    expect((await store.read('full'))?.record.holders).toEqual([]);
  }, 30_000);
});
