import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBLocal, startDynamoDBLocal } from '@latch/testing';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ClaimRequest, LockStore } from '../../src/contract/lock-store.js';
import { WriterDriver } from '../../src/engine/cas/writer-driver.js';
import { dynamoStore, ensureLockTable } from '../../src/index.js';
import { LockStoreError } from '../../src/shared/errors.js';
import { systemScheduler } from '../../src/shared/scheduler.js';

// The writer state machine driven against DynamoDB Local through the AWS SDK, claiming in one
// request (UpdateItem on the record's state), with claim answers lost after the claim applied.

let ddb: DynamoDBLocal;
let sdk: DynamoDBClient;

beforeAll(async () => {
  ddb = await startDynamoDBLocal();
  sdk = new DynamoDBClient({
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
  });
  await ensureLockTable(sdk, { table: 'locks' });
}, 60_000);

afterAll(async () => {
  sdk?.destroy();
  await ddb?.stop();
});

/** The first claim of each writer applies, and its answer is lost. */
function losingFirstClaims(store: LockStore): LockStore {
  const lost = new Set<string>();
  return Object.assign(Object.create(store) as LockStore, {
    async claim(key: string, request: ClaimRequest) {
      const outcome = await store.claim!(key, request);
      const writer = request.record.writeId.split(':')[0]!;
      if (!lost.has(writer)) {
        lost.add(writer);
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

test('writers claiming in one request take turns: one inside at a time, rising tokens, the key free at the end', async () => {
  const store = losingFirstClaims(dynamoStore({ client: sdk, table: 'locks' }));
  const key = `turns-${randomUUID()}`;
  let inside = 0;
  let most = 0;
  const tokens: number[] = [];
  const run = async (n: number) => {
    for (let round = 0; round < 3; round++) {
      const writer = new WriterDriver({
        store,
        key,
        lockId: `L${n}-${round}`,
        writer: `w${n}r${round}`,
        owner: `test:${n}`,
        terms: { leaseMs: 10_000, claimBy: 'state', marginMs: 1_000, retryMs: 15 },
        limit: 1,
        time: systemScheduler,
        claimable: (current) => (current.record.holder?.expiresAt ?? Number.POSITIVE_INFINITY) < Date.now(),
      });
      tokens.push(await writer.acquire());
      inside++;
      most = Math.max(most, inside);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inside--;
      await writer.release({ n, round });
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
}, 60_000);
