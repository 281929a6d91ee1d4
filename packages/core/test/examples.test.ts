import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { startDynamoDBLocal, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chargeInvoice } from '../examples/dynamodb-invoice.js';
import { exportsPerCustomer } from '../examples/export-limit.js';
import { acquireInJobOne, releaseInJobTwo } from '../examples/handoff.js';
import { runScheduler } from '../examples/leader-election.js';
import { quickStart } from '../examples/quick-start.js';
import { deployOnce } from '../examples/s3-deploy-lock.js';
import { migrateOnce } from '../examples/s3-list-lock.js';
import { transfer } from '../examples/transfer.js';
import { checkLockStore } from '../examples/verify-store.js';
import { dynamoStore, ensureLockTable, LockClient, LockTimeoutError, memoryStore } from '../src/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = (name: string) =>
  readFileSync(new URL(`../examples/${name}`, import.meta.url), 'utf8').trim();

describe('README examples', () => {
  test.each([
    'quick-start.ts',
    's3-deploy-lock.ts',
    'dynamodb-invoice.ts',
    'leader-election.ts',
    'handoff.ts',
    's3-list-lock.ts',
    'export-limit.ts',
    'transfer.ts',
    'lambda.ts',
    'verify-store.ts',
  ])('README shows %s exactly as tested', (name) => {
    expect(readme).toContain(example(name));
  });

  test('quick start', async () => {
    expect(await quickStart()).toEqual([
      'building the report with fencing token 1',
      'second run, token 2',
      'now free, last token 2, data {"lastRun":"2026-11-23"}',
    ]);
  });

  test('a per-customer limit', async () => {
    expect(await exportsPerCustomer()).toEqual([
      'running exports with tokens 1 and 2',
      'third export must wait',
      '2 of 2 slots taken',
      'next export got token 3',
    ]);
  });

  test('a transfer takes both accounts', async () => {
    expect(await transfer('alice', 'bob')).toBe('moved money from alice (token 1) to bob (token 1)');
    expect(await transfer('bob', 'alice')).toBe('moved money from bob (token 2) to alice (token 2)');
  });

  test('S3 deploy lock', async () => {
    await using server = await startS3Server({ bucket: 'deploy-locks' });
    const s3 = new S3Client(server.clientConfig());
    const results = await Promise.all([
      deployOnce(s3, 'deploy-locks', 'v1'),
      deployOnce(s3, 'deploy-locks', 'v2'),
    ]);
    expect(results.sort()).toEqual([
      expect.stringMatching(/^deployed v\d as deploy #1$/),
      expect.stringMatching(/^deployed v\d as deploy #2$/),
    ]);
    s3.destroy();
  });

  test('verifyStore on a store that behaves, and on one that ignores If-None-Match', async () => {
    await using good = await startS3Server({ bucket: 'checked' });
    await using bad = await startS3Server({ bucket: 'checked', personality: 'ignores-if-none-match-on-put' });
    const goodSdk = new S3Client(good.clientConfig());
    const badSdk = new S3Client(bad.clientConfig());
    expect(await checkLockStore(goodSdk, 'checked')).toBe('safe to lock on (14 requests)');
    expect(await checkLockStore(badSdk, 'checked')).toMatch(/^do not lock here:\nfailed {2}create-once: /);
    goodSdk.destroy();
    badSdk.destroy();
  });

  test('S3 list strategy on a store without conditional writes', async () => {
    await using server = await startS3Server({ bucket: 'plain-bucket', conditionalWrites: false });
    const s3 = new S3Client(server.clientConfig());
    const results = await Promise.all([
      migrateOnce(s3, 'plain-bucket', 'runner-a'),
      migrateOnce(s3, 'plain-bucket', 'runner-b'),
    ]);
    const tokens = results.map((line) => Number(/token (\d{13})$/.exec(line)?.[1]));
    expect(results.map((line) => line.split(' ')[0]).sort()).toEqual(['runner-a', 'runner-b']);
    expect(tokens.every((token) => Number.isSafeInteger(token))).toBe(true);
    expect(tokens[0]).not.toBe(tokens[1]);
    s3.destroy();
  });

  describe('on DynamoDB Local', () => {
    let ddb: Awaited<ReturnType<typeof startDynamoDBLocal>>;
    let dynamodb: DynamoDBClient;
    beforeAll(async () => {
      ddb = await startDynamoDBLocal();
      dynamodb = new DynamoDBClient({
        endpoint: ddb.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      });
      await ensureLockTable(dynamodb, { table: 'locks' });
    });
    afterAll(async () => {
      dynamodb?.destroy();
      await ddb?.stop();
    });

    test('DynamoDB invoice', async () => {
      const charges = await Promise.all([
        chargeInvoice(dynamodb, 'locks', 'inv-1'),
        chargeInvoice(dynamodb, 'locks', 'inv-1'),
      ]);
      expect(charges.sort((x, y) => x - y)).toEqual([1250, 2500]);
    });

    test('Lambda handler', async () => {
      // What the Lambda runtime gives the function: its environment, and a context per invocation.
      Object.assign(process.env, {
        LOCK_TABLE: 'locks',
        AWS_ENDPOINT_URL_DYNAMODB: ddb.endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'x',
        AWS_SECRET_ACCESS_KEY: 'y',
      });
      const { handler } = await import('../examples/lambda.js');
      const secondsLeft = (seconds: number) => ({ getRemainingTimeInMillis: () => seconds * 1000 });
      const observer = new LockClient({ store: dynamoStore({ client: dynamodb, table: 'locks' }) });

      const invokedAt = Date.now();
      const results = await Promise.all([
        handler({ orderId: 'o-1' }, secondsLeft(10)),
        handler({ orderId: 'o-1' }, secondsLeft(10)),
      ]);
      const answeredAt = Date.now();
      expect(results.map((r) => r.fencingToken).sort()).toEqual([1, 2]);
      // The lease is what was left of the invocation (10 s less the 1 s kept back).
      for (const { leaseEndsAt } of results) {
        expect(leaseEndsAt).toBeGreaterThanOrEqual(invokedAt + 9000);
        expect(leaseEndsAt).toBeLessThanOrEqual(answeredAt + 9000);
      }
      // Released before the handler returned.
      expect((await observer.inspect('orders/o-1')).state).toBe('free');

      // The wait is what is left once the work (2 s) is provided for: 3.5 s left, 0.5 s of wait.
      const held = await observer.acquire('orders/o-1');
      const waited = await handler({ orderId: 'o-1' }, secondsLeft(3.5)).catch((e: unknown) => e);
      expect(waited).toBeInstanceOf(LockTimeoutError);
      expect((waited as Error).message).toContain('Timed out after 500 ms');
      await held.release();
      // Too little time left for the work: no lock taken at all.
      await expect(handler({ orderId: 'o-1' }, secondsLeft(2.5))).rejects.toThrow(
        '1500 ms left, the work needs 2000 ms',
      );
      // Neither took the lock after the observer's hold.
      expect((await observer.inspect('orders/o-1')).fencingToken).toBe(held.fencingToken);
    });
  });

  test('leader election', async () => {
    const store = memoryStore();
    const terms: Array<[string, number]> = [];
    const a = runScheduler(store, 'replica-a', (term) => terms.push(['replica-a', term]));
    await until(() => terms.length === 1);
    const b = runScheduler(store, 'replica-b', (term) => terms.push(['replica-b', term]));
    await a.stop();
    await until(() => terms.length === 2);
    expect(terms).toEqual([
      ['replica-a', 1],
      ['replica-b', 2],
    ]);
    await b.stop();
  });

  test('hand-off between jobs', async () => {
    const store = memoryStore();
    const handle = await acquireInJobOne(store);
    const observer = new LockClient({ store });
    expect((await observer.inspect('pipeline/deploy')).context).toBe('pipeline run 1234');
    await releaseInJobTwo(store, handle);
    expect(await observer.inspect('pipeline/deploy')).toMatchObject({
      state: 'free',
      data: { deployed: 'v1.4.2' },
    });
  });
});

async function until(condition: () => boolean): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > 10_000) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
