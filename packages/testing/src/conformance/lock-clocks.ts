// Clocks: with `clock: 'untrusted'` a skewed waiter must never take a renewed lease; with
// trusted clocks a waiter far ahead does take it, which is why untrusted mode exists.
import { expect, test } from 'vitest';
import { type LockRun, skewed, uniqueKey } from './lock-run.js';

export function clockCases<Store>(run: LockRun<Store>): void {
  const { client, limits, title } = run;
  const { LockConfigError, LockLostError, LockTimeoutError } = run.latch;

  test(
    title(
      'untrusted clocks: a waiter whose wall clock is skewed never takes over a renewed lease, and takes an abandoned one only after the holder gave up',
      limits.untrustedClock,
    ),
    async () => {
      const key = uniqueKey('untrusted');
      const leaseMs = 1000;
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
      'mixed clock modes: a trusted waiter never takes over a renewed lease of a holder on untrusted clocks an hour behind, and takes an abandoned one only after the holder gave up',
      limits.untrustedClock,
    ),
    async () => {
      if (limits.untrustedClock) return; // untrusted clocks are refused (the case above)
      const key = uniqueKey('mixed-modes');
      // A lease of ten heartbeats: a loaded machine's slow renewal must not look like an abandoned lease.
      const leaseMs = 1000;
      const holder = client({
        leaseMs,
        heartbeatMs: 100,
        clock: { mode: 'untrusted', time: skewed(-3_600_000) },
      });
      const waiter = client({ leaseMs });
      const renewed = await holder.acquire(key);
      // The holder's wall clock says its lease ended an hour ago: a trusted waiter must not care.
      expect(await waiter.tryAcquire(key)).toBeNull();
      await expect(waiter.acquire(key, { waitMs: 2500 })).rejects.toBeInstanceOf(LockTimeoutError);
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
}
