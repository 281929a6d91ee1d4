import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { LockClient, type LockClientOptions, LockLostError, s3ListStore } from '../src/index.js';

// The list strategy (S3 without conditional writes) when a request is answered late or lands
// late, around a forceRelease or the end of a lease: each test is an interleaving that broke one
// of Latch's promises (never held twice, nothing lost, no key held for ever by nobody).

const BUCKET = 's3-list-late-requests';
const PREFIX = 'late/';

let server: S3Server;
let s3: S3Client;
let seq = 0;
const freshName = (label: string) => `${label}/${Date.now().toString(36)}-${++seq}`;
const listStore = (sdk = s3) => s3ListStore({ client: sdk, bucket: BUCKET, prefix: PREFIX, settleMs: 50 });
const listClient = (options: Partial<LockClientOptions> = {}) =>
  new LockClient({ store: listStore(), pollMs: 50, heartbeatMs: false, ...options });

/** Another client acquires `name` within `waitMs` (the failure names the objects in its way), and releases it. */
async function expectAnotherClientGetsIt(name: string, leaseMs: number, waitMs: number): Promise<void> {
  const other = await listClient({ leaseMs })
    .acquire(name, { waitMs })
    .catch((error: unknown) => error);
  const left = await objectsOf(name);
  expect(other, `objects left: ${left.join(', ')}`).not.toBeInstanceOf(Error);
  await (other as { release(): Promise<void> }).release();
}

async function objectsOf(name: string): Promise<string[]> {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}${name}.` }));
  return (page.Contents ?? []).map((object) => object.Key!);
}

beforeAll(async () => {
  server = await startS3Server({ bucket: BUCKET, conditionalWrites: false });
  s3 = new S3Client(server.clientConfig());
});
afterAll(async () => {
  s3?.destroy();
  await server?.stop();
});
beforeEach(() => server.faults.clear());

describe('list strategy: a renewal whose answer never came, of a lease that ends without a release', () => {
  const LATE_MS = 300;

  /** A client whose SDK does not retry, so that a cut connection reaches the engine. */
  function unretried() {
    const sdk = new S3Client({ ...server.clientConfig(), maxAttempts: 1 });
    const locks = new LockClient({
      store: listStore(sdk),
      pollMs: 50,
      heartbeatMs: false,
      leaseMs: 60_000,
      retry: { attempts: 1, baseMs: 10, maxMs: 20 },
    });
    return { sdk, locks };
  }

  async function untilLanded(name: string): Promise<void> {
    while (!server.requestLog.some((entry) => entry.fault === 'applyLate' && entry.key?.includes(name))) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  // The holder's extend(Infinity) uploads a "never" object; its answer never comes, and it is
  // applied 300 ms later. Meanwhile forceRelease (an operator's tool, here in the same client)
  // deletes the holder's objects and marks the lock lost: the engine never hears the lease
  // is over (only its own renew/release call leaseOver), so the late "never" object is not
  // withdrawn, not swept, and sorts before every later contender: the key is held for ever
  // by nobody, for every other client.
  test('forceRelease in the holding client while extend(Infinity) is unanswered: another client still gets the key', async () => {
    const name = freshName('late-renewal-forced');
    const { sdk, locks } = unretried();
    const lock = await locks.acquire(name);
    const late = server.faults.applyLate(
      { op: 'PutObject', key: new RegExp(`^${PREFIX}${name}\\.`), times: 1 },
      { delayMs: LATE_MS },
    );
    await expect(lock.extend(Number.POSITIVE_INFINITY)).rejects.toThrow();
    expect(late.hits).toBe(1);
    expect(await locks.forceRelease(name)).toBe(true);
    expect(lock.isHeld).toBe(false);
    await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
    await untilLanded(name);
    await expectAnotherClientGetsIt(name, Number.POSITIVE_INFINITY, 10_000);
    await locks.close();
    sdk.destroy();
  }, 20_000);

  // The unsure renewal is followed by one that succeeds, so the lock has no write of unknown
  // outcome left when forceRelease ends it (nothing settles it): only the end of the lock
  // itself tells the engine that the 10-minute upload, applied after, is nobody's.
  test('extend(10 min) unanswered, then a renewal that succeeds, then forceRelease: another client gets the key soon', async () => {
    const name = freshName('late-renewal-then-renewed');
    const { sdk, locks } = unretried();
    const lock = await locks.acquire(name);
    const late = server.faults.applyLate(
      { op: 'PutObject', key: new RegExp(`^${PREFIX}${name}\\.`), times: 1 },
      { delayMs: 1_000 },
    );
    await expect(lock.extend(600_000)).rejects.toThrow();
    expect(late.hits).toBe(1);
    await lock.extend(60_000);
    expect(await locks.forceRelease(name)).toBe(true);
    expect(lock.isHeld).toBe(false);
    await untilLanded(name);
    await expectAnotherClientGetsIt(name, 10_000, 8_000);
    await locks.close();
    sdk.destroy();
  }, 30_000);

  // The same with the lock lost by the clock: extend(60 s) of a 1.5 s lease gets no answer and
  // is applied 2 s later, after the lease ran out and the lock was marked lost. The late object
  // says "held for 60 s more" and nobody holds it: other clients wait for it to expire.
  test('extend(60 s) unanswered, the lock lost by the clock, the upload applied after: another client gets the key soon', async () => {
    const name = freshName('late-renewal-expired');
    const { sdk, locks } = unretried();
    const lock = await locks.acquire(name, { leaseMs: 1_500 });
    const late = server.faults.applyLate(
      { op: 'PutObject', key: new RegExp(`^${PREFIX}${name}\\.`), times: 1 },
      { delayMs: 2_000 },
    );
    await expect(lock.extend(60_000)).rejects.toThrow();
    expect(late.hits).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    expect(lock.isHeld).toBe(false); // lost by the clock
    await untilLanded(name);
    await expectAnotherClientGetsIt(name, 10_000, 8_000);
    await locks.close();
    sdk.destroy();
  }, 30_000);
});

describe('list strategy: a fail-closed lock lost by the clock while extend(finite) was unanswered', () => {
  // Lock.markLost gives a fail-closed lease that may still be in the store back through
  // engine.settleAbandoned, which the list engine does not have. extend(1 s) of a "never"
  // lease gets no answer (applied 300 ms later, as a 1 s object): the lock is lost by the
  // clock at 1 s and nothing deletes its "never" object, which keeps the lease's place first
  // in the queue: the key is held for ever by nobody, its own client included.
  test('another client gets the key', async () => {
    const name = freshName('never-lost-by-clock');
    const sdk = new S3Client({ ...server.clientConfig(), maxAttempts: 1 });
    const locks = new LockClient({
      store: listStore(sdk),
      pollMs: 50,
      heartbeatMs: false,
      leaseMs: Number.POSITIVE_INFINITY,
      retry: { attempts: 1, baseMs: 10, maxMs: 20 },
    });
    const lock = await locks.acquire(name);
    server.faults.applyLate(
      { op: 'PutObject', key: new RegExp(`^${PREFIX}${name}\\.`), times: 1 },
      { delayMs: 300 },
    );
    await expect(lock.extend(1_000)).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(lock.isHeld).toBe(false); // lost by the clock
    await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
    await expectAnotherClientGetsIt(name, Number.POSITIVE_INFINITY, 5_000);
    await locks.close();
    sdk.destroy();
  }, 20_000);
});

describe('list strategy: a claim of the key queue dropped because forceRelease of its client ran meanwhile', () => {
  // A waiter's claim is sent; forceRelease of the same client frees the holder (another
  // client's) before the claim is answered; the claim wins. The key queue drops a lease won
  // by a request sent before a forceRelease of its client and settles it through
  // engine.settleAbandoned, which the list engine does not have: the won "never" object stays,
  // first in the queue. The waiter claims again as a new contender behind it: it, and every
  // other client, wait for ever on an object nobody holds.
  test('the waiter gets the key', async () => {
    const name = freshName('dropped-win');
    const holder = await listClient({ leaseMs: Number.POSITIVE_INFINITY }).acquire(name);
    expect(holder.isHeld).toBe(true);
    const locks = listClient({ leaseMs: Number.POSITIVE_INFINITY });
    // The listing that decides the waiter's first claim reaches the store 300 ms late.
    const slow = server.faults.latency({ op: 'ListObjectsV2', times: 1 }, 300);
    const waiting = locks.acquire(name, { waitMs: 5_000 }).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await locks.forceRelease(name)).toBe(true); // frees the other client's holder
    const waiter = await waiting;
    expect(slow.active).toBe(false);
    const left = await objectsOf(name);
    expect(waiter, `objects left: ${left.join(', ')}`).not.toBeInstanceOf(Error);
    await (waiter as { release(): Promise<void> }).release();
    await locks.close();
  }, 20_000);
});

describe('list strategy: forceRelease in the holding client while another client claims', () => {
  // Client A holds; client C's claim is in its settle window (its object uploaded, its deciding
  // listing not yet made). forceRelease in A ends A's lock first, so its listing leaves A's object
  // out as over: C is the first live contender there. Freeing it too would delete C's object after
  // C decided (A's object was gone by then) that it holds the key: D could then take it beside C.
  test('the contender behind the freed holder is not freed: it holds the key alone', async () => {
    const name = freshName('force-own-then-next');
    const a = listClient({ leaseMs: 60_000 });
    await a.acquire(name);
    const [aKey] = await objectsOf(name);
    // C decides 1 s after its upload. Every delete of C's object (not A's) is slow, so that if
    // forceRelease deletes it, it lands after C's decision.
    const c = new LockClient({
      store: s3ListStore({ client: s3, bucket: BUCKET, prefix: PREFIX, settleMs: 1_000 }),
      pollMs: 50,
      heartbeatMs: false,
      leaseMs: 60_000,
    });
    const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const slowDeletes = server.faults.latency(
      { op: 'DeleteObject', key: new RegExp(`^(?!${escaped(aKey!)}$)${escaped(`${PREFIX}${name}.`)}`) },
      2_500,
    );
    const claiming = c.acquire(name, { waitMs: 10_000 });
    while ((await objectsOf(name)).length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await a.forceRelease(name)).toBe(true);
    const cLock = await claiming;
    slowDeletes.remove();
    const d = listClient({ leaseMs: 60_000 });
    const dLock = await d.tryAcquire(name);
    expect(cLock.isHeld).toBe(true);
    expect(dLock === null, 'D holds the key beside C').toBe(true);
    await cLock.release();
    await Promise.all([a.close(), c.close(), d.close()]);
  }, 20_000);
});

describe('list strategy: a tryAcquire won while forceRelease of its own client ran', () => {
  // The claim's upload is on its way when forceRelease of the same client lists (and finds
  // nothing to free); the claim then wins, and the lease is dropped as overlapping the
  // forceRelease. Settling must know the won object (its uuid is the lease's, not the
  // contender's), or a "never" object stays first in the queue, held for ever by nobody.
  test('the dropped lease is given back: another client gets the key', async () => {
    const name = freshName('try-forced');
    const locks = new LockClient({
      store: s3ListStore({ client: s3, bucket: BUCKET, prefix: PREFIX, settleMs: 1_000 }),
      pollMs: 50,
      heartbeatMs: false,
      leaseMs: Number.POSITIVE_INFINITY,
    });
    const slow = server.faults.latency(
      { op: 'PutObject', key: new RegExp(`^${PREFIX}${name}\\.`), times: 1 },
      300,
    );
    const trying = locks.tryAcquire(name);
    while (slow.hits === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await locks.forceRelease(name)).toBe(false); // the upload has not landed yet
    expect(await trying).toBeNull();
    await expectAnotherClientGetsIt(name, Number.POSITIVE_INFINITY, 5_000);
    await locks.close();
  }, 20_000);
});
