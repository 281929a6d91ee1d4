// Exclusivity over time: one holder at a time, tokens that only grow, leases that expire,
// renew, or never expire, and leaders that follow one another.
import { expect, test } from 'vitest';
import type { LockClientLike } from './latch-module.js';
import { delay, freezableTime, type LockRun, uniqueKey, waitFor } from './lock-run.js';

export function exclusivityCases<Store>(run: LockRun<Store>): void {
  const { client, limits, rounds, title, expectNextToken } = run;
  const { LockLostError, LockTimeoutError } = run.latch;

  test(`mutual exclusion: 20 contenders x ${rounds} rounds on one key, tokens strictly increase`, async () => {
    const key = uniqueKey('mutex');
    // 5 replicas with 4 local contenders each: exercises both the store race and local hand-off.
    const replicas = Array.from({ length: 5 }, () => client({ leaseMs: 5000 }));
    let inside = 0;
    let overlaps = 0;
    let counter = 0;
    const tokens: number[] = [];
    const contender = async (replica: LockClientLike) => {
      for (let round = 0; round < rounds; round++) {
        await replica.withLock(key, async (lock) => {
          inside += 1;
          if (inside > 1) overlaps += 1;
          tokens.push(lock.fencingToken);
          const seen = counter;
          await delay(Math.random() < 0.5 ? 0 : 1);
          counter = seen + 1;
          inside -= 1;
        });
      }
    };
    await Promise.all(replicas.flatMap((replica) => Array.from({ length: 4 }, () => contender(replica))));
    expect(overlaps).toBe(0);
    expect(counter).toBe(20 * rounds);
    expect(tokens).toHaveLength(20 * rounds);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
  }, 120_000);

  test('a lease that is not renewed expires and is taken over with a higher token', async () => {
    const key = uniqueKey('expiry');
    const a = client({ leaseMs: 1000, heartbeatMs: false });
    const b = client({ leaseMs: 1000 });
    const first = await a.acquire(key);
    expect(await b.tryAcquire(key)).toBeNull();
    const second = await b.acquire(key, { waitMs: 5000 });
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    // The holder gave up trusting its lease before the waiter could take it.
    expect(first.signal.aborted).toBe(true);
    expect(first.signal.reason).toBeInstanceOf(LockLostError);
    await expect(first.release()).rejects.toBeInstanceOf(LockLostError);
    await second.release();
  });

  test(title('heartbeats keep a lock across several lease lengths', limits.consecutiveTokens), async () => {
    const key = uniqueKey('renew');
    // A lease long enough that a renewal on a loaded two-core machine still lands well inside
    // it (the default heartbeat, a third of the lease, leaves about two thirds for each one).
    const leaseMs = 1500;
    const leases = 3;
    const events: Array<{ type: string; key: string }> = [];
    const a = client({ leaseMs, onEvent: (event) => event.key === key && events.push(event) });
    const b = client({ leaseMs });
    const lock = await a.acquire(key);
    for (let i = 0; i < leases; i++) {
      // At every lease boundary the lock is still ours: only renewals can have kept it.
      await delay(leaseMs);
      expect(await b.tryAcquire(key)).toBeNull();
      expect(lock.isHeld).toBe(true);
      expect(lock.signal.aborted).toBe(false);
    }
    const info = await b.inspect(key);
    expect(info.state).toBe('held');
    expect(info.owner).toBe(a.owner);
    // Holding a lease for `leases` lease lengths takes at least that many renewals (each one
    // extends the lease by at most one lease from when it was sent), and none may have failed.
    expect(events.filter((e) => e.type === 'renewed').length).toBeGreaterThanOrEqual(leases);
    expect(events.filter((e) => e.type === 'lost')).toEqual([]);
    await lock.release();
    const taken = await b.tryAcquire(key);
    expectNextToken(taken?.fencingToken, lock.fencingToken);
    await taken?.release();
  });

  test(
    title(
      'fail-closed locks (leaseMs: Infinity) never expire and keep their token on release',
      limits.consecutiveTokens,
    ),
    async () => {
      const key = uniqueKey('fail-closed');
      const a = client({ leaseMs: Number.POSITIVE_INFINITY });
      const b = client({ leaseMs: 1000 });
      const lock = await a.acquire(key);
      expect(lock.expiresAt).toBeNull();
      await delay(500);
      await expect(b.acquire(key, { waitMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
      const info = await b.inspect(key);
      expect(info).toMatchObject({ state: 'held', expiresAt: null, fencingToken: lock.fencingToken });
      await lock.release();
      const next = await b.acquire(key, { waitMs: 1000 });
      expectNextToken(next.fencingToken, lock.fencingToken);
      await next.release();
    },
  );

  test('leader election: three campaigners, the leader is cut off, then the next resigns', async () => {
    const key = uniqueKey('election');
    const terms: Array<{ who: number; token: number }> = [];
    const demotions: Array<{ who: number; reason: string }> = [];
    const times = [0, 1, 2].map(() => freezableTime());
    const campaigners = [0, 1, 2].map((who) => {
      const campaignClient = client({ leaseMs: 1000, heartbeatMs: 150, clock: { time: times[who]!.time } });
      return campaignClient.campaign(key, {
        onElected: (lock) => {
          terms.push({ who, token: lock.fencingToken });
        },
        onDemoted: (reason) => demotions.push({ who, reason }),
      });
    });
    await waitFor(() => terms.length === 1);
    const first = terms[0]!;
    // Freeze the first leader: nothing more is renewed or released, as a process that hangs.
    times[first.who]!.freeze();
    await waitFor(() => terms.length === 2, 10_000);
    const second = terms[1]!;
    expect(second.who).not.toBe(first.who);
    expect(second.token).toBeGreaterThan(first.token);
    // The second leader resigns: a follower takes over without waiting for a lease.
    await campaigners[second.who]!.stop();
    expect(demotions).toContainEqual({ who: second.who, reason: 'resigned' });
    await waitFor(() => terms.length >= 3, 5000);
    expect(terms[2]!.token).toBeGreaterThan(second.token);
    times[first.who]!.thaw();
    await Promise.all(campaigners.map((c) => c.stop()));
  }, 30_000);
}
