import { describe, expect, test } from 'vitest';
import { checkHistory } from './harness/checker.js';
import type { ResourceWrite } from './harness/protected-resource.js';

// The checker is what makes the suite able to fail: it must catch every kind of violation.

type Step = [
  kind: 'begin' | 'step' | 'commit',
  worker: string,
  token: number,
  unit: string,
  accepted?: boolean,
  /** Whether the writer checked it still held the lock just before (default: yes, at the write's arrival). */
  checked?: boolean,
];

function history(key: string, steps: Step[]): ResourceWrite[] {
  return steps.map(([kind, worker, token, unit, accepted = true, checked = true], seq) => ({
    seq,
    at: seq,
    kind,
    key,
    token,
    process: worker.slice(0, 2),
    worker,
    unit,
    accepted,
    ...(checked ? { checkedAt: seq } : {}),
  }));
}

const units = (...ids: string[]) => ({ mustBeDone: ids, reportedDone: ids });

describe('the history checker', () => {
  test('a clean history passes', () => {
    const writes = history('k', [
      ['begin', 'p0w0', 1, 'u1'],
      ['commit', 'p0w0', 1, 'u1'],
      ['begin', 'p1w0', 2, 'u2'],
      ['commit', 'p1w0', 2, 'u2'],
    ]);
    expect(checkHistory(writes, units('u1', 'u2'))).toEqual({
      acquisitions: 2,
      overlaps: [],
      unfencedOverlaps: [],
      staleWritesRejected: 0,
      sharedTokens: [],
      tokenOrderViolations: [],
      lostUnits: [],
      doubledUnits: [],
    });
  });

  test('two accepted sections of one key that overlap are reported', () => {
    const writes = history('k', [
      ['begin', 'p0w0', 1, 'u1'],
      ['begin', 'p1w0', 2, 'u2'],
      ['commit', 'p0w0', 1, 'u1', false],
      ['commit', 'p1w0', 2, 'u2'],
      // Same token twice (a lock handed out twice) is accepted by the resource, caught here.
      ['begin', 'p0w1', 3, 'u3'],
      ['begin', 'p1w1', 3, 'u4'],
      ['commit', 'p0w1', 3, 'u3'],
      ['commit', 'p1w1', 3, 'u4'],
    ]);
    const result = checkHistory(writes, units('u2', 'u3', 'u4'));
    expect(result.overlaps).toEqual(['k: p0w1/u3 (token 3) overlaps p1w1/u4 (token 3)']);
    expect(result.sharedTokens).toEqual(['k token 3 used by p0w1, p1w1']);
    expect(result.tokenOrderViolations).toEqual(['k: token 3 accepted after 3']);
    // The first pair overlapped too, but fencing rejected the late commit: counted, not an overlap.
    expect(result.unfencedOverlaps).toHaveLength(2);
    expect(result.staleWritesRejected).toBe(1);
  });

  test('a holder that goes on writing after a takeover overlaps without fencing, even when every late write is refused', () => {
    const writes = history('k', [
      ['begin', 'p0w0', 1, 'u1'],
      ['step', 'p0w0', 1, 'u1'],
      ['begin', 'p1w0', 2, 'u2'],
      // p0w0 still believed it held the lock here: its check passed, fencing refused the write.
      ['step', 'p0w0', 1, 'u1', false],
      ['commit', 'p1w0', 2, 'u2'],
    ]);
    const result = checkHistory(writes, units('u2'));
    expect(result.overlaps).toEqual([]);
    expect(result.staleWritesRejected).toBe(1);
    expect(result.unfencedOverlaps).toHaveLength(1);
    expect(result.unfencedOverlaps[0]).toMatch(/^k: p0w0\/u1 \(token 1\) believed it held the lock/);
  });

  test('a write sent without a check (already on the wire when its holder froze) is for fencing to refuse, not an unfenced overlap', () => {
    const writes = history('k', [
      ['begin', 'p0w0', 1, 'u1'],
      ['begin', 'p1w0', 2, 'u2'],
      ['commit', 'p0w0', 1, 'u1', false, false],
      ['commit', 'p1w0', 2, 'u2'],
    ]);
    const result = checkHistory(writes, units('u2'));
    expect(result.unfencedOverlaps).toEqual([]);
    expect(result.staleWritesRejected).toBe(1);
  });

  test('sections one after the other, steps included, do not overlap', () => {
    const writes = history('k', [
      ['begin', 'p0w0', 1, 'u1'],
      ['step', 'p0w0', 1, 'u1'],
      ['commit', 'p0w0', 1, 'u1'],
      ['begin', 'p1w0', 2, 'u2'],
      ['step', 'p1w0', 2, 'u2'],
      ['commit', 'p1w0', 2, 'u2'],
    ]);
    const result = checkHistory(writes, units('u1', 'u2'));
    expect(result.unfencedOverlaps).toEqual([]);
    expect(result.overlaps).toEqual([]);
  });

  test('a unit that never landed, or landed twice, is reported', () => {
    const writes = history('k', [
      ['begin', 'p0w0', 1, 'u1'],
      ['commit', 'p0w0', 1, 'u1'],
      ['begin', 'p0w0', 2, 'u1'],
      ['commit', 'p0w0', 2, 'u1'],
      ['begin', 'p0w0', 3, 'u2'],
      ['commit', 'p0w0', 3, 'u2', false],
    ]);
    const result = checkHistory(writes, { mustBeDone: ['u1', 'u2', 'u3'], reportedDone: ['u1', 'u2'] });
    expect(result.doubledUnits).toEqual(['u1']);
    expect(result.lostUnits).toEqual(['u2', 'u3']);
  });

  test('units of a killed process need not land, but may not land twice', () => {
    const writes = history('k', [
      ['begin', 'p9w0', 1, 'dead'],
      ['begin', 'p0w0', 2, 'u1'],
      ['commit', 'p0w0', 2, 'u1'],
    ]);
    const result = checkHistory(writes, { mustBeDone: ['u1'], reportedDone: ['u1'] });
    expect(result.lostUnits).toEqual([]);
    expect(result.overlaps).toEqual([]);
  });
});
