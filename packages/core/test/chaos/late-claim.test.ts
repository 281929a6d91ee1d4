import { S3Client } from '@aws-sdk/client-s3';
import { startS3Server } from '@latch/testing';
import { expect, test } from 'vitest';
import { LockClient, s3Store } from '../../src/index.js';

// Found by this suite: a claim that lands only after its whole lease has gone by (a slow
// network, SDK retries) used to make acquire return a lock that was already lost, and the
// client then never acquired that key again.
test('a claim that lands after its lease is not handed out: acquire waits and takes a fresh lease', {
  timeout: 20_000,
}, async () => {
  await using server = await startS3Server({ bucket: 'late' });
  // verify: false — the faults are for the lock's claim, not the store's check on first use.
  const s3 = new S3Client(server.clientConfig());
  const locks = new LockClient({
    store: s3Store({ client: s3, bucket: 'late', verify: false }),
    leaseMs: 1000,
  });
  const slowPut = server.faults.latency({ op: 'PutObject', times: 1 }, 1300);
  const lock = await locks.acquire('late/slow-claim', { waitMs: 5000 });
  expect(slowPut.hits).toBe(1);
  expect(lock.isHeld).toBe(true);
  // The late lease ran out unused: the lock holds a fresh one (its own entry renewed by version,
  // or claimed again), and the record shows it as the holder.
  expect(lock.expiresAt).toBeGreaterThan(Date.now() + 500);
  const seen = await locks.inspect('late/slow-claim');
  expect(seen).toMatchObject({ state: 'held', fencingToken: lock.fencingToken });
  await lock.release();

  const again = await locks.acquire('late/slow-claim', { waitMs: 3000 });
  expect(again.isHeld).toBe(true);
  expect(again.fencingToken).toBe(lock.fencingToken + 1);
  await again.release();
  s3.destroy();
});

test('a tryAcquire whose claim lands after its lease returns null, and the next try succeeds', {
  timeout: 20_000,
}, async () => {
  await using server = await startS3Server({ bucket: 'late' });
  const s3 = new S3Client(server.clientConfig());
  const locks = new LockClient({
    store: s3Store({ client: s3, bucket: 'late', verify: false }),
    leaseMs: 1000,
  });
  server.faults.latency({ op: 'PutObject', times: 1 }, 1300);
  expect(await locks.tryAcquire('late/try')).toBeNull();
  await new Promise((r) => setTimeout(r, 1100)); // the unused lease runs out
  const lock = await locks.tryAcquire('late/try');
  expect(lock?.isHeld).toBe(true);
  await lock?.release();
  s3.destroy();
});
