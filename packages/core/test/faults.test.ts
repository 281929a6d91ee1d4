import { DynamoDBClient, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import {
  type DynamoDBLocal,
  type FaultProxy,
  faultProxy,
  type S3Server,
  startDynamoDBLocal,
  startS3Server,
} from '@latch/testing';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { dynamoStore, ensureLockTable, LockClient, LockStoreError, s3Store } from '../src/index.js';

// Faults a real deployment meets, injected at the server (S3) or on the wire (DynamoDB):
// throttling is retried, a write applied whose response was lost is recognised as ours,
// a missing bucket or table is a clear error that is not retried.

let seq = 0;
const freshKey = () => `faults/${Date.now().toString(36)}-${++seq}`;

describe('S3 faults', () => {
  let server: S3Server;
  const sdks: S3Client[] = [];
  const sdk = (maxAttempts?: number) => {
    const made = new S3Client({ ...server.clientConfig(), ...(maxAttempts ? { maxAttempts } : {}) });
    sdks.push(made);
    return made;
  };
  // verify: false — these faults target the lock's own requests, not the store's check on first use.
  const client = (s3 = sdk(), bucket = 'locks') =>
    new LockClient({
      store: s3Store({ client: s3, bucket, verify: false }),
      retry: { baseMs: 5, maxMs: 50 },
    });

  beforeAll(async () => {
    server = await startS3Server({ bucket: 'locks' });
  });
  afterEach(() => server.faults.clear());
  afterAll(async () => {
    for (const s of sdks) s.destroy();
    await server?.stop();
  });

  test('503 SlowDown bursts are retried until the write lands', async () => {
    const key = freshKey();
    const burst = server.faults.slowDown({ op: 'PutObject', times: 4 });
    const lock = await client(sdk(1)).acquire(key);
    expect(burst.hits).toBe(4);
    expect(lock.fencingToken).toBe(1);
    await lock.release();
  });

  test('an acquire whose write was applied but whose response was lost is recognised as ours', async () => {
    for (const attempts of [1, 3]) {
      const key = freshKey();
      const fault = server.faults.dropResponseAfterApply({ op: 'PutObject', key, times: 1 });
      const a = client(sdk(attempts));
      const lock = await a.acquire(key);
      expect(fault.hits).toBe(1);
      expect(lock.fencingToken).toBe(1);
      expect(await client().tryAcquire(key)).toBeNull();
      const info = await a.inspect(key);
      expect(info).toMatchObject({ state: 'held', owner: a.owner, fencingToken: 1 });
      await lock.release();
      expect((await a.inspect(key)).state).toBe('free');
    }
  });

  test('a release whose response was lost still counts as released', async () => {
    const key = freshKey();
    const a = client(sdk(1));
    const lock = await a.acquire(key);
    const fault = server.faults.dropResponseAfterApply({ op: 'PutObject', key, times: 1 });
    await lock.release({ data: { finished: true } });
    expect(fault.hits).toBe(1);
    expect(await a.inspect(key)).toMatchObject({ state: 'free', data: { finished: true } });
  });

  test('a connection reset before the write is applied is retried, and nothing is written twice', async () => {
    const key = freshKey();
    server.faults.resetBeforeApply({ op: 'PutObject', key, times: 1 });
    const lock = await client(sdk(1)).acquire(key);
    expect(lock.fencingToken).toBe(1);
    await lock.release();
  });

  test('renewal survives a burst of 500 errors shorter than the lease', async () => {
    const key = freshKey();
    const a = new LockClient({
      store: s3Store({ client: sdk(1), bucket: 'locks', verify: false }),
      leaseMs: 1500,
      heartbeatMs: 200,
    });
    const lock = await a.acquire(key);
    const burst = server.faults.internalError({ op: 'PutObject', key, times: 3 });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(burst.hits).toBe(3);
    expect(lock.signal.aborted).toBe(false);
    await lock.release();
  });

  /** An SDK client whose first `times` PutObject calls fail with `error` before they are sent. */
  const failingPuts = (times: number, error: () => Error) => {
    const s3 = sdk(1);
    const state = { failed: 0, calls: 0 };
    s3.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutObjectCommand') {
          state.calls++;
          if (state.failed < times) {
            state.failed++;
            throw error();
          }
        }
        return next(args);
      },
      { step: 'build', name: 'failPuts' },
    );
    return { s3, state };
  };

  test('409 ConditionalRequestConflict is retried until the write lands', async () => {
    const conflict = () =>
      new S3ServiceException({
        name: 'ConditionalRequestConflict',
        $fault: 'client',
        $metadata: { httpStatusCode: 409 },
        message: 'A conflicting conditional operation is currently in progress against this resource.',
      });
    const { s3, state } = failingPuts(2, conflict);
    const lock = await client(s3).acquire(freshKey());
    expect(state.failed).toBe(2);
    expect(lock.fencingToken).toBe(1);
    await lock.release();
  });

  test('access denied is a clear error that is not retried', async () => {
    const denied = () =>
      new S3ServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'Access Denied',
      });
    const { s3, state } = failingPuts(Number.POSITIVE_INFINITY, denied);
    const error = await client(s3)
      .acquire(freshKey(), { waitMs: 60_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as LockStoreError).retryable).toBe(false);
    expect(state.calls).toBe(1);
  });

  test('a missing bucket is a clear, non-retried error', async () => {
    const s3 = sdk();
    const a = client(s3, 'no-such-bucket');
    server.resetRequestLog();
    const error = await a.acquire(freshKey(), { waitMs: 60_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as LockStoreError).retryable).toBe(false);
    expect((error as Error).message).toContain('no-such-bucket');
    expect(server.requestLog.length).toBeLessThanOrEqual(2);
  });
});

describe('DynamoDB faults', () => {
  let ddb: DynamoDBLocal;
  let proxy: FaultProxy;
  const sdks: DynamoDBClient[] = [];
  const sdk = (maxAttempts?: number) => {
    const made = new DynamoDBClient({
      endpoint: proxy.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      ...(maxAttempts ? { maxAttempts } : {}),
    });
    sdks.push(made);
    return made;
  };
  const client = (dynamo = sdk(), table = 'locks') =>
    new LockClient({ store: dynamoStore({ client: dynamo, table }), retry: { baseMs: 5, maxMs: 50 } });

  beforeAll(async () => {
    ddb = await startDynamoDBLocal();
    proxy = await faultProxy({ target: ddb.endpoint });
    await ensureLockTable(sdk(), { table: 'locks' });
  });
  afterEach(() => proxy.clear());
  afterAll(async () => {
    for (const s of sdks) s.destroy();
    await proxy?.close();
    await ddb?.stop();
  });

  test('throughput errors are retried with backoff', async () => {
    // DynamoDB Local never throttles, so this one error is raised in the client's middleware.
    const dynamo = sdk(1);
    let throttled = 0;
    dynamo.middlewareStack.add(
      (next) => async (args) => {
        if (throttled < 3) {
          throttled++;
          throw new ProvisionedThroughputExceededException({
            message: 'Rate exceeded',
            $metadata: { httpStatusCode: 400 },
          });
        }
        return next(args);
      },
      { step: 'build', name: 'throttleThreeTimes' },
    );
    const lock = await client(dynamo).acquire(freshKey());
    expect(throttled).toBe(3);
    await lock.release();
  });

  test('an acquire applied on the server whose response was lost is recognised as ours', async () => {
    const key = freshKey();
    const dynamo = sdk();
    let armed = true;
    // Drop responses for exactly one command (all of its SDK attempts), then heal the wire.
    dynamo.middlewareStack.add(
      (next) => async (args) => {
        if (!armed) return next(args);
        armed = false;
        proxy.dropResponses(true);
        try {
          return await next(args);
        } finally {
          proxy.dropResponses(false);
        }
      },
      { step: 'initialize', name: 'dropOneResponse' },
    );
    const a = client(dynamo);
    const lock = await a.acquire(key);
    expect(armed).toBe(false);
    expect(lock.fencingToken).toBe(1);
    expect(await client().tryAcquire(key)).toBeNull();
    expect(await a.inspect(key)).toMatchObject({ state: 'held', owner: a.owner, fencingToken: 1 });
    await lock.release();
  });

  test('a missing table is a clear, non-retried error', async () => {
    const error = await client(sdk(), 'no-such-table')
      .acquire(freshKey(), { waitMs: 60_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as LockStoreError).retryable).toBe(false);
    expect((error as Error).message).toContain('no-such-table');
  });
});
