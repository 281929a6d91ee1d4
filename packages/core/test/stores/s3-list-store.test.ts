import { randomUUID } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import {
  LockClient,
  type LockClientOptions,
  LockConfigError,
  type LockEvent,
  LockLostError,
  LockTimeoutError,
  s3ListStore,
} from '../../src/index.js';
import { countRequests } from '../helpers/count-requests.js';
import { listLocks } from '../helpers/list-locks.js';

// The list strategy on a server that ignores If-Match / If-None-Match, as an S3-compatible
// store without conditional writes does.

const BUCKET = 'list-locks';
const PREFIX = 'list/';
const SETTLE_MS = 50;
const NAME_FORMAT = /^list\/(.+)\.(\d+)\.([0-9a-f-]{36})\.(\d+|never)$/;

let server: S3Server;
let s3: S3Client;
let seq = 0;
const freshName = (label: string) => `${label}/${Date.now().toString(36)}-${++seq}`;
const store = (sdk = s3) => s3ListStore({ client: sdk, bucket: BUCKET, prefix: PREFIX, settleMs: SETTLE_MS });
const client = (options: Partial<LockClientOptions> = {}) =>
  new LockClient({ store: store(), pollMs: 50, heartbeatMs: false, ...options });

/** Object keys stored for lock `name`, as S3 lists them. */
async function objectsOf(name: string): Promise<string[]> {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}${name}.` }));
  return (page.Contents ?? []).map((object) => object.Key!);
}

async function putObject(key: string, body: unknown): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: JSON.stringify(body) }));
}

const contenderBody = (owner: string, created: number, context?: string) => ({
  latch: 'latch-list/1',
  owner,
  context,
  acquiredAt: created,
  renewedAt: created,
  leaseMs: 60_000,
});

beforeAll(async () => {
  server = await startS3Server({ bucket: BUCKET, conditionalWrites: false });
  s3 = new S3Client(server.clientConfig());
});
afterAll(async () => {
  s3?.destroy();
  await server?.stop();
});
beforeEach(() => server.faults.clear());

describe('s3ListStore: the object names', () => {
  test('one object per holder, named <prefix><name>.<created>.<uuid>.<expires>, with the context in its body', async () => {
    const name = freshName('naming');
    const locks = client({ leaseMs: 20_000 });
    const lock = await locks.acquire(name, { context: 'nightly build #12' });
    const keys = await objectsOf(name);
    expect(keys).toHaveLength(1);
    const [, lockName, created, uuid, expires] = NAME_FORMAT.exec(keys[0]!)!;
    expect(lockName).toBe(name);
    expect(Number(created)).toBe(lock.fencingToken);
    expect(Number(expires)).toBe(lock.expiresAt);
    expect(Number(expires) - Number(created)).toBe(20_000);
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const body = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: keys[0] }));
    expect(JSON.parse(await body.Body!.transformToString())).toMatchObject({
      owner: locks.owner,
      context: 'nightly build #12',
      acquiredAt: lock.fencingToken,
      leaseMs: 20_000,
    });
    await lock.release();
    expect(await objectsOf(name)).toEqual([]);
  });

  test('a fail-closed lock expires "never"', async () => {
    const name = freshName('never');
    const lock = await client({ leaseMs: Number.POSITIVE_INFINITY }).acquire(name);
    expect(await objectsOf(name)).toEqual([expect.stringMatching(/\.never$/)]);
    expect(lock.expiresAt).toBeNull();
    await lock.release();
  });

  test('locks whose names extend one another ("deploy" and "deploy.eu") do not see each other', async () => {
    const name = freshName('dots');
    const a = client();
    const b = client();
    const outer = await a.acquire(name);
    const inner = await b.tryAcquire(`${name}.eu`);
    expect(inner).not.toBeNull();
    expect((await b.inspect(name)).owner).toBe(a.owner);
    expect((await a.inspect(`${name}.eu`)).owner).toBe(b.owner);
    await Promise.all([outer.release(), inner!.release()]);
  });
});

describe('s3ListStore: contenders', () => {
  test('expired objects are ignored, not deleted', async () => {
    const name = freshName('expired');
    const now = Date.now();
    const ghost = `${PREFIX}${name}.${now - 10_000}.${randomUUID()}.${now - 5_000}`;
    await putObject(ghost, contenderBody('crashed-host', now - 10_000));
    const locks = client();
    expect((await locks.inspect(name)).state).toBe('free');
    const lock = await locks.tryAcquire(name);
    expect(lock).not.toBeNull();
    await lock!.release();
    expect(await objectsOf(name)).toEqual([ghost]);
  });

  test('a loser deletes its own object, and only its own', async () => {
    const name = freshName('loser');
    const holder = await client().acquire(name);
    const holderKeys = await objectsOf(name);
    server.resetRequestLog();
    expect(await client().tryAcquire(name)).toBeNull();
    const ofThisLock = server.requestLog.filter((entry) => entry.key?.startsWith(`${PREFIX}${name}.`));
    const puts = ofThisLock.filter((entry) => entry.op === 'PutObject');
    const deletes = ofThisLock.filter((entry) => entry.op === 'DeleteObject');
    expect(puts).toHaveLength(1);
    expect(deletes.map((entry) => entry.key)).toEqual([puts[0]!.key]);
    expect(await objectsOf(name)).toEqual(holderKeys);
    await holder.release();
  });

  test("waiters read the holder's context: inspect, LockTimeoutError.holder and the waiting event", async () => {
    const name = freshName('context');
    const holderClient = client();
    const holder = await holderClient.acquire(name, { context: 'deploy #7 from main' });
    const events: LockEvent[] = [];
    const waiter = client({ onEvent: (event) => events.push(event) });
    expect(await waiter.inspect(name)).toMatchObject({
      state: 'held',
      owner: holderClient.owner,
      context: 'deploy #7 from main',
      fencingToken: holder.fencingToken,
      expiresAt: holder.expiresAt,
    });
    const error = await waiter.acquire(name, { waitMs: 400 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as LockTimeoutError).holder).toMatchObject({
      owner: holderClient.owner,
      context: 'deploy #7 from main',
    });
    expect(events.find((event) => event.type === 'waiting')).toMatchObject({
      holder: { context: 'deploy #7 from main' },
    });
    await holder.release();
  });

  test('a slow upload is withdrawn without listing, even when the lock is free', async () => {
    const name = freshName('slow-upload');
    server.faults.latency(
      { op: 'PutObject', key: new RegExp(`^${PREFIX}${name}\\.`), times: 1 },
      4 * SETTLE_MS,
    );
    // A client of its own, so requests still finishing from earlier tests are not counted.
    const own = new S3Client(server.clientConfig());
    const counter = countRequests(own);
    const locks = new LockClient({
      store: s3ListStore({ client: own, bucket: BUCKET, prefix: PREFIX, settleMs: SETTLE_MS }),
      heartbeatMs: false,
    });
    expect(await locks.tryAcquire(name)).toBeNull();
    expect(counter.byCommand).toEqual(
      new Map([
        ['PutObjectCommand', 1],
        ['DeleteObjectCommand', 1],
      ]),
    );
    own.destroy();
    expect(await objectsOf(name)).toEqual([]);
    const lock = await client().tryAcquire(name);
    expect(lock).not.toBeNull();
    await lock!.release();
  });

  test('two clients racing never both hold (many rounds, some uploads delayed past settleMs)', async () => {
    const name = freshName('race');
    const slow = server.faults.latency(
      { op: 'PutObject', key: new RegExp(`^${PREFIX}${name}\\.`), times: 15 },
      2 * SETTLE_MS,
    );
    const replicas = [client({ leaseMs: 5000 }), client({ leaseMs: 5000 })];
    let inside = 0;
    let overlaps = 0;
    const tokens: number[] = [];
    let toldLost = 0;
    await Promise.all(
      replicas.map(async (replica) => {
        for (let round = 0; round < 15; round++) {
          await replica
            .withLock(name, async (lock) => {
              inside += 1;
              if (inside > 1) overlaps += 1;
              tokens.push(lock.fencingToken);
              await new Promise((resolve) => setTimeout(resolve, Math.random() < 0.5 ? 0 : 5));
              inside -= 1;
            })
            .catch((error: unknown) => {
              // A late upload that sorts first (withdrawn a moment later) makes the holder's release
              // report a loss: the conservative answer, never a second holder.
              if (!(error instanceof LockLostError)) throw error;
              toldLost += 1;
            });
        }
      }),
    );
    expect(overlaps).toBe(0);
    expect(tokens).toHaveLength(30);
    expect(toldLost).toBeLessThanOrEqual(15);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
    expect(slow.hits).toBe(15);
    expect(await objectsOf(name)).toEqual([]);
  }, 60_000);
});

describe('s3ListStore: an upload whose outcome is unknown', () => {
  // The connection of a claim's PutObject is cut without an answer and the upload is applied
  // 300 ms later, after the attempt gave up and deleted its object. Before, the attempt forgot
  // the object: applied late, a fail-closed ("never") object that sorts before every later
  // contender blocked the lock for ever, its own client included.
  const LATE_MS = 300;

  /** A client whose SDK does not retry, so that the cut connection reaches the claim. */
  function unretried() {
    const sdk = new S3Client({ ...server.clientConfig(), maxAttempts: 1 });
    const locks = new LockClient({
      store: store(sdk),
      pollMs: 50,
      heartbeatMs: false,
      leaseMs: Number.POSITIVE_INFINITY,
      retry: { attempts: 1, baseMs: 10, maxMs: 20 },
    });
    return { sdk, locks };
  }

  /** Cuts the next claim upload of `name` and applies it late; resolves once that attempt is over and the upload landed. */
  async function claimAppliedLate(locks: LockClient, name: string): Promise<void> {
    const late = server.faults.applyLate(
      { op: 'PutObject', key: new RegExp(`^${PREFIX}${name}\\.`), times: 1 },
      { delayMs: LATE_MS },
    );
    const first = await locks.tryAcquire(name).catch(() => null);
    await first?.release();
    expect(late.hits).toBe(1);
    const landed = () =>
      server.requestLog.some(
        (entry) => entry.fault === 'applyLate' && entry.key?.startsWith(`${PREFIX}${name}.`),
      );
    while (!landed()) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  test('its creator recognises the late object as its own: it never blocks it, and is deleted', async () => {
    const name = freshName('late-claim');
    const { sdk, locks } = unretried();
    await claimAppliedLate(locks, name);
    const again = await locks.tryAcquire(name);
    expect(again).not.toBeNull();
    await again!.release();
    const other = await client({ leaseMs: Number.POSITIVE_INFINITY }).tryAcquire(name);
    expect(other).not.toBeNull();
    await other!.release();
    expect(await objectsOf(name)).toEqual([]);
    sdk.destroy();
  });

  test('a creator that stops contending deletes it again in the background: another client gets the lock', async () => {
    const name = freshName('late-claim-away');
    const { sdk, locks } = unretried();
    await claimAppliedLate(locks, name);
    const lock = await client({ leaseMs: Number.POSITIVE_INFINITY }).acquire(name, { waitMs: 10_000 });
    expect(lock.isHeld).toBe(true);
    await lock.release();
    expect(await objectsOf(name)).toEqual([]);
    await locks.close();
    sdk.destroy();
  }, 20_000);

  test('a renewal applied after its lease was released does not block the lock', async () => {
    const name = freshName('late-renewal');
    const { sdk, locks } = unretried();
    const lock = await locks.acquire(name, { leaseMs: 60_000 });
    const late = server.faults.applyLate(
      { op: 'PutObject', key: new RegExp(`^${PREFIX}${name}\\.`), times: 1 },
      { delayMs: LATE_MS },
    );
    // extend(Infinity) uploads a "never" object of the same contender; its answer never comes.
    await expect(lock.extend(Number.POSITIVE_INFINITY)).rejects.toThrow();
    expect(late.hits).toBe(1);
    await lock.release().catch(() => undefined);
    while (!server.requestLog.some((entry) => entry.fault === 'applyLate' && entry.key?.includes(name))) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const other = await client({ leaseMs: Number.POSITIVE_INFINITY }).acquire(name, { waitMs: 10_000 });
    expect(other.isHeld).toBe(true);
    await other.release();
    await locks.close();
    sdk.destroy();
  }, 20_000);
});

describe('s3ListStore: renewal', () => {
  test('a renewal keeps the place: same created and uuid, later expiry, the old object deleted', async () => {
    const name = freshName('renew');
    const locks = client({ leaseMs: 3000 });
    const lock = await locks.acquire(name);
    const [before] = await objectsOf(name);
    // A contender that came later stays behind the renewed holder.
    const later = `${PREFIX}${name}.${lock.fencingToken + 1}.${randomUUID()}.${Date.now() + 60_000}`;
    await putObject(later, contenderBody('later-host', lock.fencingToken + 1));
    await lock.extend(10_000);
    const keys = await objectsOf(name);
    const renewed = keys.find((key) => key !== later)!;
    expect(keys).toHaveLength(2);
    expect(renewed).not.toBe(before);
    const [, , created, uuid, expires] = NAME_FORMAT.exec(renewed)!;
    const [, , createdBefore, uuidBefore, expiresBefore] = NAME_FORMAT.exec(before!)!;
    expect([created, uuid]).toEqual([createdBefore, uuidBefore]);
    expect(Number(expires)).toBeGreaterThan(Number(expiresBefore));
    expect(lock.isHeld).toBe(true);
    expect((await client().inspect(name)).owner).toBe(locks.owner);
    await lock.release();
    expect(await objectsOf(name)).toEqual([later]);
  });

  test('both objects of one renewal listed at once count as one contender', async () => {
    const name = freshName('dedupe');
    const locks = client({ leaseMs: 3000 });
    const lock = await locks.acquire(name);
    const [key] = await objectsOf(name);
    const [, , created, uuid] = NAME_FORMAT.exec(key!)!;
    // What a reader sees between a renewal's upload and its delete of the old object.
    const twin = `${PREFIX}${name}.${created}.${uuid}.${Date.now() + 60_000}`;
    await putObject(twin, contenderBody(locks.owner, Number(created)));
    expect(await client().tryAcquire(name)).toBeNull();
    await lock.extend(3000); // not a tie with itself: still first
    expect(lock.isHeld).toBe(true);
    await lock.release();
    expect(await objectsOf(name)).toEqual([]);
  });

  test('a renewal that finds another contender first loses the lock and deletes its objects', async () => {
    const name = freshName('overtaken');
    const locks = client({ leaseMs: 3000 });
    const lock = await locks.acquire(name);
    // An object sorting before the holder: an upload that landed late, or a clock far behind.
    const earlier = `${PREFIX}${name}.${lock.fencingToken - 1000}.${randomUUID()}.${Date.now() + 60_000}`;
    await putObject(earlier, contenderBody('skewed-host', lock.fencingToken - 1000, 'job on a slow clock'));
    await expect(lock.extend(3000)).rejects.toThrow(/job on a slow clock \(skewed-host\) now sorts first/);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(await objectsOf(name)).toEqual([earlier]);
  });

  test('a renewal that lands after the lease expired loses the lock', async () => {
    const name = freshName('late-renewal');
    let offset = 0;
    const time = { now: () => Date.now() + offset, monotonic: () => performance.now() };
    const lock = await client({ leaseMs: 2000, clock: { time } }).acquire(name);
    // The wall clock passes the stored lease while the upload is on its way (before it is sent,
    // the lock would see it passed and end without a request).
    const slow = server.faults.latency({ op: 'PutObject', times: 1 }, 300);
    const extended = lock.extend(2000);
    while (slow.hits === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    offset = 5000; // this host's wall clock is now past the lease it stored
    await expect(extended).rejects.toThrow(/landed after the lease had expired/);
    expect(lock.isHeld).toBe(false);
    expect(await objectsOf(name)).toEqual([]);
  });

  test('extend refuses a lease too short for the strategy, before any request', async () => {
    const name = freshName('short-extend');
    const lock = await client({ leaseMs: 3000 }).acquire(name);
    await expect(lock.extend(3 * SETTLE_MS - 1)).rejects.toBeInstanceOf(LockConfigError);
    expect(lock.isHeld).toBe(true);
    await lock.release();
  });

  test('a lockAtLeastMs release near the end of the minimum hold shortens the lease to what remains', async () => {
    const name = freshName('at-least-late');
    let ahead = 0;
    const time = { now: () => Date.now(), monotonic: () => performance.now() + ahead };
    const startedAt = performance.now();
    const lock = await client({ leaseMs: 3000, clock: { time } }).acquire(name, { lockAtLeastMs: 1000 });
    // Jump to 100 ms before the minimum hold ends: less than the shortest lease the strategy
    // takes for an acquisition (3 × SETTLE_MS), which must not apply to this renewal.
    ahead = 1000 - 100 - (performance.now() - startedAt);
    await lock.release();
    expect(lock.isHeld).toBe(false);
  });

  test("forceRelease deletes the holder's objects; the holder notices at its next renewal", async () => {
    const name = freshName('force');
    const lock = await client({ leaseMs: 3000 }).acquire(name);
    expect(await client().forceRelease(name)).toBe(true);
    expect(await objectsOf(name)).toEqual([]);
    await expect(lock.extend(3000)).rejects.toThrow(/deleted by someone else/);
    expect(await client().forceRelease(name)).toBe(false);
  });

  test('heartbeats renew in the background and every change is reported through onEvent', async () => {
    const name = freshName('events');
    const events: string[] = [];
    const locks = client({ leaseMs: 1000, heartbeatMs: 100, onEvent: (event) => events.push(event.type) });
    const lock = await locks.acquire(name);
    const until = Date.now() + 10_000;
    while (events.filter((type) => type === 'renewed').length < 3 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(lock.isHeld).toBe(true);
    await lock.release();
    expect(events[0]).toBe('acquired');
    expect(events.filter((type) => type === 'renewed').length).toBeGreaterThanOrEqual(3);
    expect(events.at(-1)).toBe('released');
  });
});

describe('s3ListStore: list', () => {
  const listed = async (prefix: string, sdk = s3) => (await listLocks(store(sdk), prefix)).found;

  test('lists every lock with an object as inspect shows it, in key order, across ListObjectsV2 pages', async () => {
    const base = freshName('list-pages');
    const now = Date.now();
    // 1,001 live holders, written as contenders would write them: more than one page of keys.
    const names = Array.from({ length: 1001 }, (_, i) => `${base}/${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map((name) => {
          const created = now - 1000;
          return putObject(
            `${PREFIX}${name}.${created}.${randomUUID()}.${now + 60_000}`,
            contenderBody('host-a', created),
          );
        }),
      );
    }
    const own = new S3Client(server.clientConfig());
    const counter = countRequests(own);
    const found = await listed(`${base}/`, own);
    expect(found.map((info) => info.key)).toEqual(names);
    expect(found.every((info) => info.state === 'held' && info.owner === 'host-a')).toBe(true);
    expect(Object.fromEntries(counter.byCommand)).toEqual({
      ListObjectsV2Command: 2,
      GetObjectCommand: 1001,
    });
    own.destroy();
  }, 60_000);

  test('a lock whose objects all expired is free; objects of locks whose names extend it are theirs; other objects are ignored', async () => {
    const base = freshName('list-names');
    const now = Date.now();
    const object = (name: string, created: number, expires: number) =>
      putObject(
        `${PREFIX}${name}.${created}.${randomUUID()}.${expires}`,
        contenderBody(`owner of ${name}`, created),
      );
    // "x.1" lists in the middle of "x"'s objects: "x.1.<created>…" sorts before "x.<created>…".
    await object(`${base}/x`, now - 20_000, now - 10_000);
    await object(`${base}/x`, now - 1000, now + 60_000);
    await object(`${base}/x.1`, now - 1000, now + 60_000);
    await object(`${base}/gone`, now - 20_000, now - 10_000);
    await putObject(`${PREFIX}${base}/README`, 'not a contender');
    await putObject(`${PREFIX}${base}/y.not-a-time.${randomUUID()}.never`, contenderBody('nobody', now));
    const found = await listed(`${base}/`);
    expect(found.map((info) => [info.key, info.state, info.owner])).toEqual([
      [`${base}/gone`, 'free', undefined],
      [`${base}/x`, 'held', `owner of ${base}/x`],
      [`${base}/x.1`, 'held', `owner of ${base}/x.1`],
    ]);
    expect(found[0]).toEqual({ key: `${base}/gone`, state: 'free', fencingToken: 0, limit: 1, holders: [] });
    expect((await listed(`${base}/x.`)).map((info) => info.key)).toEqual([`${base}/x.1`]);
  });
});

describe('s3ListStore: what it refuses, before sending anything', () => {
  test('bad options, untrusted clocks, short leases, data and resume are LockConfigErrors', async () => {
    const own = new S3Client(server.clientConfig());
    const counter = countRequests(own);
    const client = (options: Partial<LockClientOptions> = {}) =>
      new LockClient({ store: store(own), heartbeatMs: false, ...options });
    const slowSettling = s3ListStore({ client: own, bucket: BUCKET, prefix: PREFIX, settleMs: 1000 });
    const bad: Array<() => unknown> = [
      () => s3ListStore({ client: s3, bucket: '' }),
      () => s3ListStore({ client: {} as S3Client, bucket: BUCKET }),
      () => s3ListStore({ client: s3, bucket: BUCKET, prefix: 7 as unknown as string }),
      () => s3ListStore({ client: s3, bucket: BUCKET, settleMs: 0 }),
      () => s3ListStore({ client: s3, bucket: BUCKET, prefix: 'p'.repeat(1000) }),
      () => new LockClient({ store: store(own), clock: 'untrusted' }),
      // Leases under three settle periods, on a store that settles for 1 s.
      () => new LockClient({ store: slowSettling, leaseMs: 2000 }),
      () => client().acquire('x'.repeat(1000)),
      () =>
        new LockClient({ store: slowSettling, leaseMs: 60_000 }).acquire(freshName('short'), {
          leaseMs: 2000,
        }),
      () => client().resume('latch1.eyJrIjoiYSIsImwiOiJiIiwibyI6ImMiLCJ0IjoxfQ'),
    ];
    for (const call of bad) {
      await expect(Promise.resolve().then(call)).rejects.toBeInstanceOf(LockConfigError);
    }
    expect(counter.count).toBe(0);

    const name = freshName('data');
    const lock = await client().acquire(name);
    counter.reset();
    await expect(lock.update({ step: 1 })).rejects.toThrow(/keeps no lock record/);
    await expect(lock.release({ data: { step: 1 } })).rejects.toBeInstanceOf(LockConfigError);
    await expect(client().release(name, lock.handle, { data: 1 })).rejects.toBeInstanceOf(LockConfigError);
    await expect(client().resume(lock.handle)).rejects.toThrow(/resume\(handle\) is not available/);
    expect(counter.count).toBe(0);
    expect(lock.isHeld).toBe(true);
    await lock.release();
    own.destroy();
  });
});
