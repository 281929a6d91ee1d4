import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { VersionedRecord } from '../../src/contract/lock-record.js';
import type { LockStore } from '../../src/contract/lock-store.js';
import { WriterDriver } from '../../src/engine/cas/writer-driver.js';
import { memoryStore, s3Store } from '../../src/index.js';
import { LockStoreError } from '../../src/shared/errors.js';
import { systemScheduler } from '../../src/shared/scheduler.js';

// The writer state machine driven against real stores (memory, and the local S3 server through
// the AWS SDK): several writers contend for one key, with answers lost after the write applied.

const BUCKET = 'latch-writer-driver';
let server: S3Server;
let client: S3Client;

beforeAll(async () => {
  server = await startS3Server({ bucket: BUCKET });
  client = new S3Client({
    endpoint: server.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
  });
});

afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

/** A store whose writes land but whose answers are lost, the first `count` times (per writer id prefix). */
function losingAnswers(store: LockStore, count: number): LockStore {
  const lost = new Map<string, number>();
  return Object.assign(Object.create(store) as LockStore, {
    async write(
      key: string,
      record: VersionedRecord['record'],
      condition: Parameters<LockStore['write']>[2],
    ) {
      const outcome = await store.write(key, record, condition);
      const writer = record.writeId.split(':')[0]!;
      const n = lost.get(writer) ?? 0;
      if (n < count) {
        lost.set(writer, n + 1);
        throw new LockStoreError('the answer was lost', {
          retryable: true,
          maybeApplied: true,
          reason: 'unavailable',
        });
      }
      return outcome;
    },
  });
}

const expired = (current: VersionedRecord) => {
  const holder = current.record.holder;
  return holder?.expiresAt != null && holder.expiresAt < Date.now();
};

function driver(
  store: LockStore,
  key: string,
  n: number,
  options: { limit?: number; leaseMs?: number | null } = {},
) {
  return new WriterDriver({
    store,
    key,
    lockId: `L${n}-${randomUUID().slice(0, 8)}`,
    writer: `w${n}${randomUUID().slice(0, 8)}`,
    owner: `test:${n}`,
    terms: {
      leaseMs: options.leaseMs === undefined ? 10_000 : options.leaseMs,
      claimBy: 'version',
      marginMs: 1_000,
      retryMs: 15,
    },
    limit: options.limit ?? 1,
    time: systemScheduler,
    claimable: expired,
  });
}

const stores: [string, () => LockStore][] = [
  ['memory', () => memoryStore()],
  ['s3', () => s3Store({ client, bucket: BUCKET, prefix: `${randomUUID()}/` })],
];

describe.each(stores)('on the %s store', (_name, makeStore) => {
  test('three writers take turns: one inside at a time, rising tokens, the last data stored, the key free at the end', async () => {
    const store = losingAnswers(makeStore(), 2);
    const key = 'turns';
    let inside = 0;
    let most = 0;
    const tokens: number[] = [];
    const run = async (n: number) => {
      for (let round = 0; round < 3; round++) {
        const writer = driver(store, key, n);
        const token = await writer.acquire();
        inside++;
        most = Math.max(most, inside);
        tokens.push(token);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inside--;
        await writer.release({ by: n, round });
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
