import { describe, expect, test } from 'vitest';
import type { Lock } from '../src/index.js';
import { LocalTurn } from '../src/waiting/local-turn.js';
import { OtherTurn } from '../src/waiting/other-turn.js';
import { replica, scriptedClients } from './helpers/scripted-clients.js';

type Scripted = ReturnType<typeof scriptedClients>;
type Client = ReturnType<Scripted['client']>;

// The turn logic on a hand-moved clock: when a client yields, how long its turns are, and
// when a waiter in another client looks for the key.

function clock() {
  let now = 0;
  return { monotonic: () => now, advance: (ms: number) => (now += ms) };
}

describe('LocalTurn', () => {
  test('a turn is used after turnMs; a yield keeps the poller away for pollMs plus the release’s round trip', () => {
    const time = clock();
    const turn = new LocalTurn(1_000, 1_000, time.monotonic);
    turn.begin(1);
    time.advance(999);
    expect(turn.used).toBe(false);
    time.advance(1);
    expect(turn.used).toBe(true);
    turn.yieldedAfter(30, 1);
    expect(turn.msToStayAway()).toBe(1_030);
  });

  test('turns stretch while nobody else takes the key at yields, up to 16 turns, and shrink at the first sign of another client', () => {
    const time = clock();
    const turn = new LocalTurn(1_000, 1_000, time.monotonic);
    let token = 1;
    turn.begin(token);
    const lengths: number[] = [];
    for (let i = 0; i < 6; i++) {
      const start = time.monotonic();
      while (!turn.used) time.advance(100);
      lengths.push(time.monotonic() - start);
      turn.yieldedAfter(0, token);
      time.advance(turn.msToStayAway());
      token += 1; // our own claim is the very next acquisition: nobody else came
      turn.begin(token);
    }
    expect(lengths).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 16_000]);
    // Another client acquired in between (the token skipped): back to one turnMs.
    turn.yieldedAfter(0, token);
    turn.begin(token + 5);
    time.advance(1_000);
    expect(turn.used).toBe(true);
    // Seeing another client's holder does the same.
    turn.yieldedAfter(0, token + 5);
    turn.begin(token + 6);
    time.advance(1_000);
    expect(turn.used).toBe(false);
    turn.otherHolds();
    turn.begin(token + 20);
    time.advance(1_000);
    expect(turn.used).toBe(true);
  });
});

describe('OtherTurn', () => {
  test('a waiter looks when the other client’s turn should end, counted from when it last knew the key was not that holder’s', () => {
    const time = clock();
    const other = new OtherTurn(1_000, time.monotonic);
    other.knew(0); // this client released at 0
    time.advance(300);
    expect(other.sawHolder('theirs-1', 300)).toBe(700); // their turn began after 0: ends at 1000 at the earliest
    time.advance(400);
    expect(other.sawHolder('theirs-1', 700)).toBe(300);
    time.advance(300);
    expect(other.sawHolder('theirs-1', 1_000)).toBe('ended'); // poll briskly from here
    time.advance(100);
    expect(other.sawHolder('theirs-1', 1_100)).toBeUndefined(); // only once
    // A new holder: its turn began after the last look that saw the one before.
    time.advance(100);
    expect(other.sawHolder('theirs-2', 1_200)).toBe(900);
  });

  test('with no turns (localTurnMs Infinity) it never aims', () => {
    const time = clock();
    const other = new OtherTurn(Number.POSITIVE_INFINITY, time.monotonic);
    expect(other.sawHolder('theirs', 0)).toBeUndefined();
  });
});

describe('a waiter in another client and a busy client’s turns', () => {
  test('the waiter gets the key within a few brisk polls of the yield, not a poll interval later', async () => {
    const s = scriptedClients({ heartbeatMs: false, pollMs: 1_000 });
    const busy = s.client();
    const other = s.client();
    const hold = (ms: number) => new Promise((resolve) => s.time.schedule(() => resolve(undefined), ms));
    let yieldedAt: number | undefined;
    let stop = false;
    const local = async () => {
      while (!stop) {
        const lock = await busy.acquire('k');
        await hold(50);
        await lock.release();
      }
    };
    const contenders = [local(), local()];
    await s.time.advance(10);
    let gotAt: number | undefined;
    void other.acquire('k').then(async (lock) => {
      gotAt = s.time.elapsed;
      stop = true;
      await lock.release();
    });
    // The busy client's turn (1 s, from its claim at 0) ends with the first release after it.
    const watcher = s.scripted.inner;
    const write = watcher.write.bind(watcher);
    watcher.write = (key, record, condition) => {
      if (record.holder === null && yieldedAt === undefined) yieldedAt = s.time.elapsed;
      return write(key, record, condition);
    };
    await s.time.advance(3_000);
    expect(yieldedAt).toBeDefined();
    expect(gotAt).toBeDefined();
    expect(gotAt! - yieldedAt!).toBeLessThanOrEqual(100);
    stop = true;
    await s.time.advance(2_000);
    await Promise.all(contenders);
  });
});

const sleep = (s: Scripted, ms: number) => new Promise<void>((resolve) => s.time.schedule(resolve, ms));

/** `n` callers of `locks` that each acquire `key` again and again, holding it `holdMs`. */
function busyCallers(s: Scripted, locks: Client, key: string, n: number, holdMs: number, limit?: number) {
  let stop = false;
  const tokens: number[] = [];
  const loops = Array.from({ length: n }, async () => {
    while (!stop) {
      let lock: Lock;
      try {
        lock = await locks.acquire(key, limit ? { limit } : {});
      } catch {
        return;
      }
      tokens.push(lock.fencingToken);
      await sleep(s, holdMs);
      await lock.release().catch(() => undefined);
    }
  });
  return {
    tokens,
    stop: async () => {
      stop = true;
      await s.time.advance(1_000);
      await Promise.allSettled(loops);
    },
  };
}

describe('turns bound how long another client waits', () => {
  test('a client cycling one slot of a full semaphore still yields it to a third client at its turn’s end', async () => {
    const s = scriptedClients();
    const a = s.client();
    const b = replica(s);
    const c = replica(s);
    // B holds one of two slots for a long time.
    const bLock = await b.acquire('k', { limit: 2 });
    // A's callers keep the other slot busy.
    const busy = busyCallers(s, a, 'k', 3, 10, 2);
    await s.time.advance(50);
    let cLock: Lock | undefined;
    void c.acquire('k', { limit: 2 }).then((lock) => (cLock = lock));
    // The bound: one stretched turn (16 x localTurnMs = 16 x 200) plus pollMs.
    await s.time.until(() => cLock !== undefined, 16 * 200 + 200 + 500, 50);
    const got = cLock !== undefined;
    const cycles = busy.tokens.length;
    await cLock?.release();
    await bLock.release();
    await busy.stop();
    expect(cycles).toBeGreaterThan(10); // A's callers were cycling their slot meanwhile
    expect(got).toBe(true);
  });

  test('a lock kept busy by one client’s callers for long enough to stretch its turns: another client gets it within one stretched turn plus pollMs', async () => {
    const s = scriptedClients();
    const a = s.client();
    const b = replica(s);
    const busy = busyCallers(s, a, 'k', 3, 10);
    await s.time.advance(20_000); // A alone: its turns stretch to 16 x 200 ms
    let bLock: Lock | undefined;
    const asked = s.time.elapsed;
    void b.acquire('k').then((lock) => (bLock = lock));
    await s.time.until(() => bLock !== undefined, 16 * 200 + 200 + 100, 10);
    const waited = s.time.elapsed - asked;
    const got = bLock !== undefined;
    await bLock?.release();
    await busy.stop();
    expect(got).toBe(true);
    expect(waited).toBeLessThanOrEqual(16 * 200 + 200 + 100);
  });
});
