import { describe, expect, test } from 'vitest';
import { LocalTurn } from '../src/waiting/local-turn.js';
import { OtherTurn } from '../src/waiting/other-turn.js';

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
    const { scriptedClients } = await import('./helpers/scripted-clients.js');
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
