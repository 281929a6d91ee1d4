import { describe, expect, test } from 'vitest';
import { HANDOVER_GAP_MS, type HoldLane, HoldTimeline } from '../src/launcher/hold-timeline.js';
import type { WireLockEvent } from '../src/shared/ipc-messages.js';

// Recorded sequences of the events replicas send (replica-N:pidM owners, times in ms), replayed
// into the timeline in the order the launcher received them.

type Recorded = Partial<WireLockEvent> & Pick<WireLockEvent, 'type' | 'owner' | 'at'>;
const replay = (timeline: HoldTimeline, events: Recorded[], key = 'invoice/INV-1001'): void => {
  for (const event of events) timeline.apply({ key, ...event });
};
const lane = (timeline: HoldTimeline, key = 'invoice/INV-1001'): HoldLane => {
  const found = timeline.lanes([key])[0];
  if (!found) throw new Error(`no lane for ${key}`);
  return found;
};
const holder = (n: number, at: number) => ({
  owner: `replica-${n}:pid${n}`,
  acquiredAt: at,
  expiresAt: at + 4_000,
});

describe('hold timeline', () => {
  test('a release followed at once by the next acquisition is a hand-over; the wait ends with it', () => {
    const timeline = new HoldTimeline();
    replay(timeline, [
      { type: 'acquired', owner: 'replica-1:pid1', at: 1_000, fencingToken: 5, expiresAt: 5_000 },
      { type: 'waiting', owner: 'replica-2:pid2', at: 1_010, holder: holder(1, 1_000) },
      { type: 'renewed', owner: 'replica-1:pid1', at: 1_300, fencingToken: 5, expiresAt: 5_300 },
      { type: 'released', owner: 'replica-1:pid1', at: 1_500, fencingToken: 5 },
      { type: 'acquired', owner: 'replica-2:pid2', at: 1_520, fencingToken: 6, expiresAt: 5_520 },
    ]);
    const { holds, waits, limit } = lane(timeline);
    expect(limit).toBe(1);
    expect(holds).toMatchObject([
      { replica: 'replica-1', fencingToken: 5, start: 1_000, end: 1_500, ending: 'released', began: null },
      {
        replica: 'replica-2',
        fencingToken: 6,
        start: 1_520,
        end: null,
        leaseEnd: 5_520,
        ending: 'held',
        began: {
          kind: 'handover',
          from: { replica: 'replica-1', fencingToken: 5, ending: 'released' },
          gapMs: 20,
        },
      },
    ]);
    expect(waits).toMatchObject([
      {
        replica: 'replica-2',
        start: 1_010,
        end: 1_520,
        outcome: 'acquired',
        fencingToken: 6,
        heldBy: 'replica-1',
      },
    ]);
  });

  test('a release that arrives after the next acquisition (another channel) still makes a hand-over', () => {
    const timeline = new HoldTimeline();
    replay(timeline, [
      { type: 'acquired', owner: 'replica-1:pid1', at: 1_000, fencingToken: 5, expiresAt: 5_000 },
      { type: 'acquired', owner: 'replica-2:pid2', at: 1_520, fencingToken: 6, expiresAt: 5_520 },
    ]);
    // Not a takeover: replica-1's lease had not run out, its release is on its way.
    expect(lane(timeline).holds.map((h) => [h.ending, h.began])).toEqual([
      ['held', null],
      ['held', null],
    ]);
    replay(timeline, [{ type: 'released', owner: 'replica-1:pid1', at: 1_500, fencingToken: 5 }]);
    expect(lane(timeline).holds[1]!.began).toMatchObject({ kind: 'handover', from: { fencingToken: 5 } });
  });

  test('a short hold whose events all arrive after its successor’s is still the one handed over from', () => {
    const timeline = new HoldTimeline();
    replay(timeline, [
      { type: 'acquired', owner: 'replica-2:pid2', at: 1_520, fencingToken: 6, expiresAt: 5_520 },
      { type: 'acquired', owner: 'replica-1:pid1', at: 1_000, fencingToken: 5, expiresAt: 5_000 },
      { type: 'released', owner: 'replica-1:pid1', at: 1_500, fencingToken: 5 },
    ]);
    expect(
      lane(timeline).holds.map((h) => [h.fencingToken, h.began?.kind ?? null, h.began?.from.fencingToken]),
    ).toEqual([
      [5, null, undefined],
      [6, 'handover', 5],
    ]);
  });

  test('a killed holder never releases: the next holder takes over once its lease has run out', () => {
    const timeline = new HoldTimeline();
    const key = 'billing/leader';
    replay(
      timeline,
      [
        { type: 'acquired', owner: 'replica-1:pid1', at: 0, fencingToken: 3, expiresAt: 4_000 },
        { type: 'waiting', owner: 'replica-2:pid2', at: 100, holder: holder(1, 0) },
        { type: 'renewed', owner: 'replica-1:pid1', at: 1_300, fencingToken: 3, expiresAt: 5_300 },
      ],
      key,
    );
    // SIGKILL at 2 s: the launcher sees the process go; its lease still runs until 5.3 s.
    expect(timeline.replicaGone('replica-1', 2_000)).toEqual([key]);
    expect(lane(timeline, key).holds[0]).toMatchObject({ ending: 'expired', end: 5_300 });
    replay(
      timeline,
      [{ type: 'acquired', owner: 'replica-2:pid2', at: 5_400, fencingToken: 4, expiresAt: 9_400 }],
      key,
    );

    const { holds, waits } = lane(timeline, key);
    expect(holds[1]).toMatchObject({
      replica: 'replica-2',
      fencingToken: 4,
      began: {
        kind: 'takeover',
        from: { replica: 'replica-1', fencingToken: 3, ending: 'expired' },
        gapMs: 100,
      },
    });
    expect(waits).toMatchObject([{ replica: 'replica-2', start: 100, end: 5_400, outcome: 'acquired' }]);
  });

  test('an acquisition after a lease ran out ends the silent hold as expired, even without word of the holder', () => {
    const timeline = new HoldTimeline();
    replay(timeline, [
      { type: 'acquired', owner: 'replica-1:pid1', at: 0, fencingToken: 3, expiresAt: 4_000 },
      { type: 'acquired', owner: 'replica-3:pid3', at: 4_250, fencingToken: 4, expiresAt: 8_250 },
    ]);
    expect(lane(timeline).holds).toMatchObject([
      { fencingToken: 3, ending: 'expired', end: 4_000 },
      {
        fencingToken: 4,
        began: { kind: 'takeover', from: { replica: 'replica-1', ending: 'expired' }, gapMs: 250 },
      },
    ]);
  });

  test('a lost lock ends its hold with the reason; whoever acquires next takes over', () => {
    const timeline = new HoldTimeline();
    replay(timeline, [
      { type: 'acquired', owner: 'replica-1:pid1', at: 0, fencingToken: 7, expiresAt: 4_000 },
      {
        type: 'lost',
        owner: 'replica-1:pid1',
        at: 2_500,
        fencingToken: 7,
        error: 'the lease expired before renewal',
      },
      { type: 'acquired', owner: 'replica-2:pid2', at: 4_100, fencingToken: 8, expiresAt: 8_100 },
    ]);
    expect(lane(timeline).holds).toMatchObject([
      { fencingToken: 7, ending: 'lost', end: 2_500, lostReason: 'the lease expired before renewal' },
      {
        fencingToken: 8,
        began: { kind: 'takeover', from: { fencingToken: 7, ending: 'lost' }, gapMs: 1_600 },
      },
    ]);
  });

  test('a lock that sat free between two holders is neither a hand-over nor a takeover', () => {
    const timeline = new HoldTimeline();
    replay(timeline, [
      { type: 'acquired', owner: 'replica-1:pid1', at: 0, fencingToken: 1, expiresAt: 4_000 },
      { type: 'released', owner: 'replica-1:pid1', at: 800, fencingToken: 1 },
      {
        type: 'acquired',
        owner: 'replica-2:pid2',
        at: 800 + HANDOVER_GAP_MS + 1,
        fencingToken: 2,
        expiresAt: 9_000,
      },
      // A late release of the old token does not end the new hold.
      { type: 'released', owner: 'replica-1:pid1', at: 2_000, fencingToken: 1 },
    ]);
    expect(lane(timeline).holds.map((h) => [h.fencingToken, h.ending, h.began])).toEqual([
      [1, 'released', null],
      [2, 'held', null],
    ]);
  });

  test('waits: timeouts and aborts end them in order, a skip or a tryAcquire is a wait of no length, a dead replica waits no more', () => {
    const timeline = new HoldTimeline();
    replay(timeline, [
      { type: 'acquired', owner: 'replica-1:pid1', at: 0, fencingToken: 1, expiresAt: 4_000 },
      { type: 'waiting', owner: 'replica-2:pid2', at: 10 },
      { type: 'waiting', owner: 'replica-2:pid2', at: 20 },
      { type: 'waiting', owner: 'replica-3:pid3', at: 30 },
      // tryAcquire turned away: it never waited, and ends nobody's wait.
      { type: 'contended', owner: 'replica-2:pid2', at: 40, reason: 'busy', holder: holder(1, 0) },
      { type: 'contended', owner: 'replica-2:pid2', at: 500, reason: 'timeout', holder: holder(1, 0) },
      { type: 'contended', owner: 'replica-2:pid2', at: 600, reason: 'aborted' },
      // A cron run with waitMs 0 skips: a timeout with no wait before it.
      { type: 'contended', owner: 'replica-1:pid1', at: 700, reason: 'timeout', holder: holder(1, 0) },
    ]);
    expect(timeline.replicaGone('replica-3', 900)).toEqual(['invoice/INV-1001']);
    expect(lane(timeline).waits).toMatchObject([
      { replica: 'replica-2', start: 10, end: 500, outcome: 'timeout', heldBy: 'replica-1' },
      { replica: 'replica-2', start: 20, end: 600, outcome: 'aborted' },
      { replica: 'replica-3', start: 30, end: 900, outcome: 'gone' },
      { replica: 'replica-2', start: 40, end: 40, outcome: 'busy', heldBy: 'replica-1' },
      { replica: 'replica-1', start: 700, end: 700, outcome: 'timeout' },
    ]);
  });

  test('under a limit, a new holder follows the one whose place it took, and holders side by side follow nobody', () => {
    const key = 'export/customer-acme';
    const timeline = new HoldTimeline((k) => (k.startsWith('export/') ? 2 : 1));
    replay(
      timeline,
      [
        { type: 'acquired', owner: 'replica-1:pid1', at: 0, fencingToken: 1, expiresAt: 4_000 },
        { type: 'acquired', owner: 'replica-2:pid2', at: 5, fencingToken: 2, expiresAt: 4_005 },
        { type: 'waiting', owner: 'replica-3:pid3', at: 10 },
        { type: 'released', owner: 'replica-1:pid1', at: 1_200, fencingToken: 1 },
        { type: 'acquired', owner: 'replica-3:pid3', at: 1_210, fencingToken: 3, expiresAt: 5_210 },
      ],
      key,
    );
    const { holds, limit } = lane(timeline, key);
    expect(limit).toBe(2);
    expect(
      holds.map((h) => [h.fencingToken, h.ending, h.began?.kind ?? null, h.began?.from.fencingToken]),
    ).toEqual([
      [1, 'released', null, undefined],
      [2, 'held', null, undefined],
      [3, 'held', 'handover', 1],
    ]);
  });

  test('memory is bounded: so many holds and waits per key, the last window, so many keys', () => {
    const timeline = new HoldTimeline(undefined, {
      holdsPerKey: 3,
      waitsPerKey: 2,
      windowMs: 10_000,
      keys: 2,
    });
    for (let token = 1; token <= 5; token++) {
      replay(timeline, [
        { type: 'waiting', owner: 'replica-2:pid2', at: token * 100 },
        {
          type: 'acquired',
          owner: 'replica-2:pid2',
          at: token * 100 + 10,
          fencingToken: token,
          expiresAt: 9_000,
        },
        { type: 'released', owner: 'replica-2:pid2', at: token * 100 + 50, fencingToken: token },
      ]);
    }
    expect(lane(timeline).holds.map((h) => h.fencingToken)).toEqual([3, 4, 5]);
    expect(lane(timeline).waits.map((w) => w.fencingToken)).toEqual([4, 5]);

    // A minute on: the finished holds have left the window; a hold still running stays.
    replay(timeline, [
      { type: 'acquired', owner: 'replica-1:pid1', at: 60_000, fencingToken: 6, expiresAt: null },
    ]);
    replay(timeline, [{ type: 'waiting', owner: 'replica-3:pid3', at: 80_000 }]);
    expect(lane(timeline).holds.map((h) => h.fencingToken)).toEqual([6]);
    expect(lane(timeline).waits.map((w) => w.start)).toEqual([80_000]);

    // Two keys at most: the quietest one goes.
    replay(timeline, [{ type: 'waiting', owner: 'replica-3:pid3', at: 80_100 }], 'customer/acme');
    replay(timeline, [{ type: 'waiting', owner: 'replica-3:pid3', at: 80_200 }], 'customer/globex');
    expect(timeline.keys()).toEqual(['customer/acme', 'customer/globex']);
  });

  test('an event about a hold it never saw leaves no empty lane behind', () => {
    const timeline = new HoldTimeline();
    replay(timeline, [{ type: 'released', owner: 'replica-1:pid1', at: 10, fencingToken: 4 }]);
    expect(timeline.keys()).toEqual([]);
  });
});
