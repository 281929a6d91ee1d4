import { describe, expect, test } from 'vitest';
import { keyOfHandle, type Lock, LockNotHeldError } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// A lock passes among the callers of one client with no store write: a hand-over reserves
// tokens above its waiter's, and each later local caller takes the next one. These tests pin
// what must stay true while the store does not hear of it. (Turns are off: nobody else waits.)

type Scripted = ReturnType<typeof scriptedClients>;

/** Counts the writes that reach the store (past any scripted fault). */
function countWrites(s: Scripted): { readonly count: number; reset(): void } {
  const inner = s.scripted.inner;
  const write = inner.write.bind(inner);
  let count = 0;
  inner.write = (...args) => {
    count++;
    return write(...args);
  };
  return {
    get count() {
      return count;
    },
    reset: () => {
      count = 0;
    },
  };
}

/** Starts an acquire of `key` that waits behind the current holder; `got()` is its lock once delivered. */
function queue(locks: ReturnType<Scripted['client']>, key: string, context?: string) {
  let lock: Lock | undefined;
  const waiting = locks.acquire(key, { context }).then((won) => {
    lock = won;
    return won;
  });
  return { waiting, got: () => lock };
}

/** A holder that got the lock by a written hand-over (so tokens are reserved), and a client to queue on. */
async function holderWithReserve(s: Scripted, key = 'k') {
  const locks = s.client();
  const first = await locks.acquire(key);
  const second = queue(locks, key);
  await s.time.advance(1);
  await first.release(); // a hand-over: one write, which reserves tokens
  await s.time.advance(1);
  return { locks, first, holder: second.got()! };
}

/** Releases `holder` while another caller of `locks` waits for its key; returns that caller's lock. */
async function passOn(s: Scripted, locks: ReturnType<Scripted['client']>, holder: Lock, context?: string) {
  const next = queue(locks, holder.key, context);
  await s.time.advance(1);
  await holder.release();
  await s.time.advance(1);
  return next.got()!;
}

describe('passing a lock among one client’s callers', () => {
  test('costs no store request; tokens rise by one, and a claim elsewhere starts above every reserved one', async () => {
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const writes = countWrites(s);
    const { locks, first, holder } = await holderWithReserve(s);
    expect(holder.fencingToken).toBe(first.fencingToken + 1);
    const tokens = [holder.fencingToken];
    let current = holder;
    writes.reset();
    for (let i = 0; i < 5; i++) {
      const next = queue(locks, 'k', `caller ${i}`);
      await s.time.advance(1);
      await current.release();
      await s.time.advance(1);
      current = next.got()!;
      expect(held(current)).toBe(true);
      expect(current.context).toBe(`caller ${i}`);
      tokens.push(current.fencingToken);
    }
    expect(writes.count).toBe(0);
    for (const [i, token] of tokens.entries()) expect(token).toBe(holder.fencingToken + i);
    await current.release(); // nobody waits: back to the store
    expect(writes.count).toBe(1);
    const other = await replica(s).acquire('k');
    expect(other.fencingToken).toBeGreaterThan(holder.fencingToken + 1000);
  });

  test('past the reserved block the next hand-over writes once and reserves again: tokens never repeat or go back', async () => {
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const writes = countWrites(s);
    const { locks, holder } = await holderWithReserve(s);
    writes.reset();
    let current = holder;
    const tokens = [holder.fencingToken];
    for (let i = 0; i < 1100; i++) {
      const next = queue(locks, 'k');
      await s.time.advance(0);
      await current.release();
      await s.time.advance(0);
      current = next.got()!;
      tokens.push(current.fencingToken);
    }
    // 1023 tokens were reserved above the first holder's: the 1024th pass writes.
    expect(writes.count).toBe(1);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    expect(tokens[1023]).toBe(holder.fencingToken + 1023);
    expect(tokens[1024]).toBe(holder.fencingToken + 1024);
    const info = await replica(s).inspect('k');
    expect(info.fencingToken).toBe(holder.fencingToken + 1024); // the written hand-over's holder
    await current.release();
    const other = await replica(s).acquire('k');
    expect(other.fencingToken).toBeGreaterThan(tokens.at(-1)!);
  });

  test('renewals keep tokens reserved ahead of the holders: the lock passes on past the first block with no hand-over write', async () => {
    const s = scriptedClients({ heartbeatMs: 100, localTurnMs: Number.POSITIVE_INFINITY });
    const { locks, holder } = await holderWithReserve(s);
    const stored: Array<string | undefined> = [];
    const inner = s.scripted.inner;
    const write = inner.write.bind(inner);
    inner.write = (key, record, condition) => {
      stored.push(record.holder?.lockId);
      return write(key, record, condition);
    };
    let current = holder;
    for (let i = 0; i < 1100; i++) {
      const next = queue(locks, 'k');
      await s.time.advance(1);
      await current.release();
      current = next.got()!;
    }
    expect(current.fencingToken).toBe(holder.fencingToken + 1100);
    expect(stored.length).toBeGreaterThan(5); // the renewals
    expect(new Set(stored)).toEqual(new Set([holder.lease.lockId])); // and nothing but them
    expect((await replica(s).inspect('k')).fencingToken).toBeGreaterThan(holder.fencingToken + 1000);
  });

  test('a renewal stores the current holder: inspect shows its token and context one heartbeat later', async () => {
    const s = scriptedClients({ heartbeatMs: 1_000, localTurnMs: Number.POSITIVE_INFINITY });
    const { locks, holder } = await holderWithReserve(s);
    const passed = await passOn(s, locks, holder, 'the next caller');
    const observer = replica(s);
    expect((await observer.inspect('k')).fencingToken).toBe(holder.fencingToken); // not written yet
    await s.time.advance(1_100);
    const info = await observer.inspect('k');
    expect(info.fencingToken).toBe(passed.fencingToken);
    expect(info.context).toBe('the next caller');
    expect(info.holders.map((entry) => entry.fencingToken)).toEqual([passed.fencingToken]);
    expect(held(passed)).toBe(true);
  });

  test('the current local holder’s signal aborts when the client loses the record', async () => {
    const s = scriptedClients({ heartbeatMs: 1_000, localTurnMs: Number.POSITIVE_INFINITY });
    const { locks, holder } = await holderWithReserve(s);
    const passed = await passOn(s, locks, holder);
    expect(await replica(s).forceRelease('k')).toBe(true);
    await s.time.advance(1_100); // its next renewal finds the record taken
    expect(passed.signal.aborted).toBe(true);
    expect(passed.isHeld).toBe(false);
    expect(holder.signal.aborted).toBe(false); // released before: not lost
  });

  test('the lock passed on is trusted no longer than the lock before it trusted the lease', async () => {
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const { locks, holder } = await holderWithReserve(s);
    // A slow write: the lease is trusted for less (twice the write's time comes off its end).
    s.scripted.nextWrite({ kind: 'slow', ms: 1_500 });
    const sentAt = s.time.elapsed;
    await Promise.all([holder.update({ slow: true }), s.time.advance(1_500)]);
    const passed = await passOn(s, locks, holder);
    // 10 s lease, less 2 × 1.5 s: trusted until 7 s after the send, not 9 s.
    await s.time.advance(sentAt + 6_900 - s.time.elapsed);
    expect(held(passed)).toBe(true);
    await s.time.advance(200);
    expect(passed.isHeld).toBe(false);
  });

  test('a lock whose handle was read is handed over with a write, so its handle then names no lock', async () => {
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const writes = countWrites(s);
    const { locks, holder } = await holderWithReserve(s);
    const handle = holder.handle;
    const next = queue(locks, 'k');
    await s.time.advance(1);
    writes.reset();
    await holder.release();
    await s.time.advance(1);
    expect(writes.count).toBe(1);
    const successor = next.got()!;
    const elsewhere = replica(s);
    await expect(elsewhere.release('k', handle)).rejects.toBeInstanceOf(LockNotHeldError);
    await expect(elsewhere.resume(handle)).rejects.toBeInstanceOf(LockNotHeldError);
    await expect(locks.release('k', handle)).rejects.toBeInstanceOf(LockNotHeldError);
    expect(held(successor)).toBe(true);
    expect(await elsewhere.tryAcquire('k')).toBeNull();
  });

  test('a handle read after its lock was passed on is refused, here and elsewhere; the current holder keeps the lock', async () => {
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const { locks, holder } = await holderWithReserve(s);
    const passed = await passOn(s, locks, holder);
    const late = holder.handle; // read only now: the lock it names ended by a pass
    const elsewhere = replica(s);
    await expect(elsewhere.release('k', late)).rejects.toThrow(/passed the lock to another caller/);
    await expect(elsewhere.resume(late)).rejects.toBeInstanceOf(LockNotHeldError);
    await expect(locks.release('k', late)).rejects.toBeInstanceOf(LockNotHeldError);
    expect(held(passed)).toBe(true);
    expect(await elsewhere.tryAcquire('k')).toBeNull();
  });

  test('resuming a holder the record does not show yet takes that holder’s token, and the holder learns it lost the lock', async () => {
    const s = scriptedClients({ heartbeatMs: 1_000, localTurnMs: Number.POSITIVE_INFINITY });
    const { locks, holder } = await holderWithReserve(s);
    const passed = await passOn(s, locks, holder);
    const resumed = await replica(s).resume(passed.handle);
    expect(resumed.fencingToken).toBe(passed.fencingToken);
    expect((await replica(s).inspect('k')).fencingToken).toBe(passed.fencingToken);
    await s.time.advance(1_100);
    expect(passed.signal.aborted).toBe(true);
    expect(held(resumed)).toBe(true);
  });

  test('a release that stores data hands over with a write: the store has the data when it resolves', async () => {
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const writes = countWrites(s);
    const { locks, holder } = await holderWithReserve(s);
    const next = queue(locks, 'k');
    await s.time.advance(1);
    writes.reset();
    await holder.release({ data: { step: 2 } });
    expect(writes.count).toBe(1);
    expect((await replica(s).inspect('k')).data).toEqual({ step: 2 });
    await s.time.advance(1);
    expect(next.got()!.data).toEqual({ step: 2 });
  });

  test('a lock nothing renews is checked on the lease’s schedule, however often it is passed on', async () => {
    // heartbeatMs false: the holder reads the record every 5 polls (1 s) to learn it was taken.
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const { locks, holder } = await holderWithReserve(s);
    expect(await replica(s).forceRelease('k')).toBe(true);
    let current = holder;
    for (let i = 0; i < 5; i++) {
      const next = queue(locks, 'k');
      await s.time.advance(800); // each holder lasts less than the check interval
      if (!held(current)) break; // it learned: nothing more is passed on
      await current.release();
      await s.time.advance(1);
      current = next.got()!;
    }
    expect(held(current)).toBe(false);
    expect(current.signal.aborted).toBe(true);
  });

  test('a forceRelease in the holder’s own client ends its lock at once: nothing is passed on', async () => {
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const { locks, holder } = await holderWithReserve(s);
    const next = queue(locks, 'k');
    await s.time.advance(1);
    expect(await locks.forceRelease('k')).toBe(true);
    expect(holder.signal.aborted).toBe(true);
    await s.time.advance(1);
    // The waiter claims the key afresh, above every token reserved before.
    const after = next.got()!;
    expect(after.fencingToken).toBeGreaterThan(holder.fencingToken + 1000);
  });

  test('a handle read after a pass has a prefix of its own, so that other versions refuse it as no handle at all', async () => {
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const { locks, holder } = await holderWithReserve(s);
    const next = queue(locks, 'k');
    await s.time.advance(1);
    expect(holder.handle.startsWith('latch1.')).toBe(true); // read while held: a write hand-over follows
    await holder.release();
    await s.time.advance(1);
    const successor = next.got()!;
    const another = queue(locks, 'k');
    await s.time.advance(1);
    await successor.release(); // passed on with no write
    await s.time.advance(1);
    expect(another.got()).toBeDefined();
    expect(successor.handle.startsWith('latch1p.')).toBe(true);
    expect(keyOfHandle(successor.handle)).toBe('k');
  });
});
