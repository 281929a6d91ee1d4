import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type Lock,
  LockClient,
  type LockClientOptions,
  LockConfigError,
  LockCorruptedError,
  type LockEvent,
  LockLostError,
  LockNotHeldError,
  LockTimeoutError,
  type TimeSource,
} from '../../src/index.js';
import { type ConformanceBackend, type Limitations, uniqueKey } from './backend.js';

const skewed = (offsetMs: number): TimeSource => ({
  now: () => Date.now() + offsetMs,
  monotonic: () => performance.now(),
});

function untilAborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The behaviour every store must show through LockClient, run once per backend. Where a
 * backend is limited by design (`limitations`, each with its reason), the case checks the
 * documented alternative instead, and its title says so.
 */
export function describeLockConformance(
  name: string,
  start: () => Promise<ConformanceBackend>,
  options: { limitations?: Limitations; mutexRounds?: number } = {},
): void {
  const limits = options.limitations ?? {};
  // A backend whose every acquisition waits (the list strategy's settle time) runs fewer rounds.
  const rounds = options.mutexRounds ?? 25;
  /** A case title, naming the limitation that changes what it checks. */
  const title = (text: string, limitation?: string) =>
    limitation ? `${text} [limited: ${limitation}]` : text;
  /** The next acquisition's token: exactly +1, or just higher where tokens are not consecutive. */
  const expectNextToken = (next: number | undefined, previous: number) => {
    if (limits.consecutiveTokens) expect(next).toBeGreaterThan(previous);
    else expect(next).toBe(previous + 1);
  };
  describe(`LockClient on ${name}`, () => {
    let backend: ConformanceBackend;
    const clients: LockClient[] = [];
    const client = (options: Partial<LockClientOptions> = {}) => {
      const made = new LockClient({ store: backend.store(), pollMs: 50, ...options });
      clients.push(made);
      return made;
    };

    beforeAll(async () => {
      backend = await start();
    });
    afterAll(async () => {
      await backend?.stop();
    });

    test(`mutual exclusion: 20 contenders x ${rounds} rounds on one key, tokens strictly increase`, async () => {
      const key = uniqueKey('mutex');
      // 5 replicas with 4 local contenders each: exercises both the store race and local hand-off.
      const replicas = Array.from({ length: 5 }, () => client({ leaseMs: 5000 }));
      let inside = 0;
      let overlaps = 0;
      let counter = 0;
      const tokens: number[] = [];
      const contender = async (replica: LockClient) => {
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
      const a = client({ leaseMs: 400, heartbeatMs: false });
      const b = client({ leaseMs: 400 });
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
      const events: LockEvent[] = [];
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

    test(title('the loss signal fires when the record is stolen', limits.newHolderInLoss), async () => {
      const key = uniqueKey('stolen');
      const a = client({ leaseMs: 600, heartbeatMs: 100 });
      const b = client({ leaseMs: 600 });
      const lost: LockLostError[] = [];
      const lock = await a.acquire(key, { onLost: (error) => lost.push(error) });
      expect(await b.forceRelease(key)).toBe(true);
      const thief = await b.acquire(key, { waitMs: 1000 });
      const reason = await untilAborted(lock.signal);
      expect(reason).toBeInstanceOf(LockLostError);
      if (limits.newHolderInLoss)
        expect(String((reason as Error).message)).toMatch(/deleted by someone else/);
      else expect(String((reason as Error).message)).toContain(b.owner);
      expect(lost).toHaveLength(1);
      expect(thief.fencingToken).toBeGreaterThan(lock.fencingToken);
      await expect(lock.update({ late: true })).rejects.toBeInstanceOf(LockLostError);
      await thief.release();
    });

    test('the loss signal fires when renewals keep failing', async () => {
      const key = uniqueKey('renew-fails');
      const a = client({ leaseMs: 600, heartbeatMs: 100, retry: { attempts: 2, baseMs: 10, maxMs: 20 } });
      const lock = await a.acquire(key);
      const heal = backend.breakWrites();
      try {
        const reason = await untilAborted(lock.signal);
        expect(reason).toBeInstanceOf(LockLostError);
        // On a loaded machine the heartbeat can wake after the deadline and report it as a pause: the same loss.
        expect((reason as Error).message).toMatch(/ran out before a renewal|paused past its lease/);
      } finally {
        heal();
      }
    });

    test('a holder whose event loop was blocked past its lease loses the lock before running on', async () => {
      const key = uniqueKey('paused');
      const a = client({ leaseMs: 300, heartbeatMs: 100 });
      const lock = await a.acquire(key);
      const until = performance.now() + 600;
      while (performance.now() < until) {
        // a synchronous stall: no timer, no renewal can run
      }
      const reason = await untilAborted(lock.signal);
      expect(reason).toBeInstanceOf(LockLostError);
      expect((reason as Error).message).toMatch(/paused past its lease|ran out before a renewal/);
      await expect(lock.update({ late: true })).rejects.toBeInstanceOf(LockLostError);
    });

    test(
      title(
        'fail-closed locks (leaseMs: Infinity) never expire and keep their token on release',
        limits.consecutiveTokens,
      ),
      async () => {
        const key = uniqueKey('fail-closed');
        const a = client({ leaseMs: Number.POSITIVE_INFINITY });
        const b = client({ leaseMs: 300 });
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

    test(
      title(
        'untrusted clocks: a waiter whose wall clock is skewed never takes over a renewed lease, and takes an abandoned one only after the holder gave up',
        limits.untrustedClock,
      ),
      async () => {
        const key = uniqueKey('untrusted');
        const leaseMs = 500;
        if (limits.untrustedClock) {
          expect(() => client({ leaseMs, clock: 'untrusted' })).toThrow(LockConfigError);
          expect(() => client({ leaseMs, clock: { mode: 'untrusted', time: skewed(leaseMs) } })).toThrow(
            /untrusted/,
          );
          return;
        }
        const holder = client({
          leaseMs,
          heartbeatMs: 100,
          clock: { mode: 'untrusted', time: skewed(-leaseMs / 2) },
        });
        const waiter = client({ leaseMs, clock: { mode: 'untrusted', time: skewed(leaseMs / 2) } });
        const renewed = await holder.acquire(key);
        await expect(waiter.acquire(key, { waitMs: 1500 })).rejects.toBeInstanceOf(LockTimeoutError);
        expect(renewed.signal.aborted).toBe(false);
        await renewed.release();

        const abandoned = await holder.acquire(key, { heartbeatMs: false });
        const taken = await waiter.acquire(key, { waitMs: 5000 });
        // Ordering, not timing: the abandoned holder's own deadline passed before the takeover.
        expect(abandoned.signal.aborted).toBe(true);
        expect(taken.fencingToken).toBe(abandoned.fencingToken + 1);
        await taken.release();
      },
    );

    test(
      title(
        'trusted clocks: a waiter far ahead in time sees the lease as expired (why untrusted mode exists)',
        limits.takeoverTrace,
      ),
      async () => {
        const key = uniqueKey('trusted-skew');
        const holder = client({ leaseMs: 5000 });
        const waiter = client({ leaseMs: 5000, clock: { mode: 'trusted', time: skewed(60_000) } });
        const lock = await holder.acquire(key);
        const early = await waiter.tryAcquire(key);
        expect(early).not.toBeNull();
        expect(early!.fencingToken).toBeGreaterThan(lock.fencingToken);
        await early!.release();
        // Without a trace of the takeover the old holder cannot tell; only fencing tokens protect.
        if (limits.takeoverTrace) await expect(lock.release()).resolves.toBeUndefined();
        else await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
      },
    );

    test(title('data round-trips through update, release and the next acquire', limits.data), async () => {
      const key = uniqueKey('data');
      const a = client();
      const b = client();
      const lock = await a.acquire<{ step: number; note?: string }>(key);
      expect(lock.data).toBeUndefined();
      if (limits.data) {
        // Refused before anything is sent, so the lock is still held and nothing is lost silently.
        await expect(lock.update({ step: 1 })).rejects.toBeInstanceOf(LockConfigError);
        await expect(lock.release({ data: { step: 2 } })).rejects.toThrow(/cannot store lock data/);
        expect(lock.isHeld).toBe(true);
        expect(await b.inspect(key)).toMatchObject({ state: 'held', owner: a.owner });
        expect((await b.inspect(key)).data).toBeUndefined();
        await lock.release();
        expect((await b.inspect(key)).state).toBe('free');
        return;
      }
      await lock.update({ step: 1, note: 'naïve ✓ 🚀' });
      expect((await b.inspect(key)).data).toEqual({ step: 1, note: 'naïve ✓ 🚀' });
      await lock.release({ data: { step: 2 } });
      const next = await b.acquire<{ step: number }>(key, { waitMs: 1000 });
      expect(next.data).toEqual({ step: 2 });
      await next.release();
      expect((await a.inspect(key)).data).toEqual({ step: 2 });
    });

    test('context is stored, shown by inspect and named in a timeout', async () => {
      const key = uniqueKey('context');
      const a = client();
      const b = client();
      const lock = await a.acquire(key, { context: 'deploy #42 on host-a' });
      expect(await b.inspect(key)).toMatchObject({ state: 'held', context: 'deploy #42 on host-a' });
      const error = await b.acquire(key, { waitMs: 100 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect((error as Error).message).toContain('held by deploy #42 on host-a');
      await lock.release();
    });

    test(title('a handle lets a second client resume and then release the lock', limits.resume), async () => {
      const key = uniqueKey('handle');
      const a = client({ leaseMs: 2000 });
      const b = client({ leaseMs: 2000 });
      const lock = await a.acquire(key);
      if (limits.resume) {
        await expect(b.resume(lock.handle)).rejects.toBeInstanceOf(LockConfigError);
        expect(lock.isHeld).toBe(true);
        await b.release(key, lock.handle);
        expect((await a.inspect(key)).state).toBe('free');
        await expect(b.release(key, lock.handle)).rejects.toBeInstanceOf(LockNotHeldError);
        return;
      }
      const resumed = await b.resume(lock.handle);
      expect(resumed.fencingToken).toBe(lock.fencingToken);
      // The first process's renewal now fails: the lease moved to the resuming client.
      await expect(lock.extend(2000)).rejects.toBeInstanceOf(LockLostError);
      await b.release(key, resumed.handle);
      expect((await a.inspect(key)).state).toBe('free');
      await expect(b.release(key, resumed.handle)).rejects.toBeInstanceOf(LockNotHeldError);
    });

    test(title('a handle releases a lock acquired by another client', limits.data), async () => {
      const key = uniqueKey('handle-release');
      const a = client();
      const b = client();
      const lock = await a.acquire(key, { heartbeatMs: false });
      if (limits.data) {
        await expect(b.release(key, lock.handle, { data: { deployed: 'v2' } })).rejects.toBeInstanceOf(
          LockConfigError,
        );
        expect((await b.inspect(key)).state).toBe('held');
        await b.release(key, lock.handle);
        expect(await b.inspect(key)).toMatchObject({ state: 'free' });
        await expect(b.release(`${key}-other`, lock.handle)).rejects.toBeInstanceOf(LockConfigError);
        return;
      }
      await b.release(key, lock.handle, { data: { deployed: 'v2' } });
      const info = await b.inspect(key);
      expect(info).toMatchObject({ state: 'free', data: { deployed: 'v2' } });
      await expect(b.release(`${key}-other`, lock.handle)).rejects.toBeInstanceOf(LockConfigError);
    });

    test('leader election: three campaigners, the leader is cut off, then the next resigns', async () => {
      const key = uniqueKey('election');
      const terms: Array<{ who: number; token: number }> = [];
      const demotions: Array<{ who: number; reason: string }> = [];
      const campaigners = [0, 1, 2].map((who) => {
        const campaignClient = client({ leaseMs: 600, heartbeatMs: 150 });
        return campaignClient.campaign(key, {
          onElected: (lock) => {
            terms.push({ who, token: lock.fencingToken });
          },
          onDemoted: (reason) => demotions.push({ who, reason }),
        });
      });
      await waitFor(() => terms.length === 1);
      const first = terms[0]!;
      // "Kill" the first leader: its lock is abandoned, nothing more is renewed or released.
      const firstLock = campaigners[first.who]!.lock!;
      await stopRenewing(firstLock);
      await waitFor(() => terms.length === 2, 10_000);
      const second = terms[1]!;
      expect(second.who).not.toBe(first.who);
      expect(second.token).toBeGreaterThan(first.token);
      // The second leader resigns: a follower takes over without waiting for a lease.
      await campaigners[second.who]!.stop();
      expect(demotions).toContainEqual({ who: second.who, reason: 'resigned' });
      await waitFor(() => terms.length >= 3, 5000);
      expect(terms[2]!.token).toBeGreaterThan(second.token);
      await Promise.all(campaigners.map((c) => c.stop()));
    }, 30_000);

    test('bad input fails fast with LockConfigError', async () => {
      const a = client();
      const key = uniqueKey('bad');
      const bad: Array<() => unknown> = [
        () => a.acquire(''),
        () => a.acquire(42 as unknown as string),
        () => a.acquire('x'.repeat(5000)),
        () => a.acquire('lone \uD800 surrogate'),
        () => a.acquire(key, { waitMs: -1 }),
        () => a.acquire(key, { waitMs: Number.NaN }),
        () => a.acquire(key, { leaseMs: 0 }),
        () => a.acquire(key, { leaseMs: 1000, heartbeatMs: 1000 }),
        () => a.acquire(key, { context: 7 as unknown as string }),
        () => a.tryAcquire(key, { leaseMs: -5 }),
        () => a.withLock(key, 'not a function' as unknown as () => void),
        () => a.inspect(''),
        () => a.release(key, 'not-a-handle'),
        () => a.resume('latch1.garbage'),
        () => a.forceRelease(''),
        () => new LockClient({ store: backend.store(), leaseMs: -1 }),
        () => new LockClient({ store: backend.store(), leaseMs: 1000, heartbeatMs: 2000 }),
        () => new LockClient({ store: undefined as never }),
      ];
      for (const call of bad) {
        await expect(Promise.resolve().then(call)).rejects.toBeInstanceOf(LockConfigError);
      }
      const lock = await a.acquire(key);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await expect(lock.update(cyclic)).rejects.toBeInstanceOf(LockConfigError);
      await expect(lock.update({ n: 10n } as unknown)).rejects.toBeInstanceOf(LockConfigError);
      await expect(lock.update({ big: 'x'.repeat(500_000) })).rejects.toBeInstanceOf(LockConfigError);
      await expect(lock.release({ data: { when: new Date() } })).rejects.toBeInstanceOf(LockConfigError);
      await lock.release();
    });

    test('a corrupted record is reported, never overwritten', async () => {
      const key = uniqueKey('corrupt');
      const a = client();
      await backend.corrupt(key);
      await expect(a.tryAcquire(key)).rejects.toBeInstanceOf(LockCorruptedError);
      await expect(a.acquire(key, { waitMs: 200 })).rejects.toBeInstanceOf(LockCorruptedError);
      await expect(a.inspect(key)).rejects.toThrow(key);
    });

    test('withLock releases when fn throws and reports a loss that happened while fn ran', async () => {
      const key = uniqueKey('with-lock');
      const a = client({ leaseMs: 500, heartbeatMs: 100 });
      const b = client();
      await expect(a.withLock(key, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      expect((await b.inspect(key)).state).toBe('free');
      const result = a.withLock(key, async (lock: Lock) => {
        await b.forceRelease(key);
        await untilAborted(lock.signal);
        return 'done';
      });
      await expect(result).rejects.toBeInstanceOf(LockLostError);
    });

    test('await using releases at scope exit', async () => {
      const key = uniqueKey('dispose');
      const a = client();
      {
        await using lock = await a.acquire(key);
        expect(lock.isHeld).toBe(true);
        expect((await a.inspect(key)).state).toBe('held');
      }
      expect((await a.inspect(key)).state).toBe('free');
    });

    test(
      title(
        'lockAtLeastMs keeps a quickly released lock held until the minimum has passed',
        limits.data ?? limits.consecutiveTokens,
      ),
      async () => {
        const key = uniqueKey('at-least');
        const a = client({ leaseMs: 5000 });
        const b = client({ leaseMs: 5000 });
        const lock = await a.acquire(key, { lockAtLeastMs: 600 });
        await lock.release(limits.data ? {} : { data: { ran: true } });
        expect(lock.isHeld).toBe(false);
        expect(await b.tryAcquire(key)).toBeNull();
        expect(await b.inspect(key)).toMatchObject(
          limits.data ? { state: 'held', owner: a.owner } : { state: 'held', data: { ran: true } },
        );
        const next = await b.acquire(key, { waitMs: 5000 });
        expectNextToken(next.fencingToken, lock.fencingToken);
        await next.release();
        const quick = await b.acquire(key, { lockAtLeastMs: 1 });
        await new Promise((resolve) => setTimeout(resolve, 5));
        await quick.release();
        expect((await a.inspect(key)).state).toBe('free');
      },
    );

    test('an aborted signal cancels waiting', async () => {
      const key = uniqueKey('abort');
      const a = client();
      const b = client();
      const lock = await a.acquire(key);
      const controller = new AbortController();
      const waiting = b.acquire(key, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error('no longer needed')), 100);
      await expect(waiting).rejects.toThrow('no longer needed');
      await lock.release();
    });
  });

  async function stopRenewing(lock: Lock): Promise<void> {
    // Simulates a crashed process: timers stop, nothing is released.
    (lock as unknown as { clearTimers(): void }).clearTimers();
  }

  async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
    const started = Date.now();
    while (!condition()) {
      if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
      await delay(20);
    }
  }
}
