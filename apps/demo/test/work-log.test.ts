import { describe, expect, test } from 'vitest';
import { WorkLog } from '../src/launcher/work-log.js';

describe('work log (the overlap check)', () => {
  test('holders one after the other do not overlap', () => {
    const log = new WorkLog();
    const mark = log.mark();
    for (let token = 1; token <= 3; token++) {
      const entry = log.enter('invoice/A', `replica-${token}`, token)!;
      log.leave(entry.seq);
    }
    expect(log.summary(mark, () => true)).toEqual({ entries: 3, overlaps: [], peak: 1 });
  });

  test('a second holder entering before the first left is an overlap', () => {
    const log = new WorkLog();
    const mark = log.mark();
    const first = log.enter('invoice/A', 'replica-1', 7)!;
    log.enter('invoice/A', 'replica-2', 8);
    const summary = log.summary(mark, () => true);
    expect(summary.overlaps).toHaveLength(1);
    expect(summary.overlaps[0]).toMatchObject({
      resource: 'invoice/A',
      first: { holder: 'replica-1', fencingToken: 7 },
      second: { holder: 'replica-2', fencingToken: 8 },
    });
    log.leave(first.seq);
  });

  test('a resource whose lock has a limit lets that many in at once; one more is an overlap', () => {
    const log = new WorkLog((resource) => (resource.startsWith('export/') ? 2 : 1));
    const mark = log.mark();
    const first = log.enter('export/customer-acme', 'replica-1', 1)!;
    log.enter('export/customer-acme', 'replica-2', 2);
    expect(log.summary(mark, () => true)).toEqual({ entries: 2, overlaps: [], peak: 2 });
    const third = log.enter('export/customer-acme', 'replica-3', 3)!;
    const summary = log.summary(mark, () => true);
    expect(summary.peak).toBe(3);
    expect(summary.overlaps.map((o) => [o.first.fencingToken, o.second.fencingToken])).toEqual([
      [1, 3],
      [2, 3],
    ]);
    // Once two have left, a new holder is within the limit again.
    log.leave(first.seq);
    log.leave(third.seq);
    const later = log.mark();
    log.enter('export/customer-acme', 'replica-1', 4);
    expect(log.summary(later, () => true)).toEqual({ entries: 1, overlaps: [], peak: 2 });
  });

  test('different resources may be worked on at once', () => {
    const log = new WorkLog();
    log.enter('invoice/A', 'replica-1', 1);
    log.enter('invoice/B', 'replica-2', 1);
    expect(log.summary(0, () => true).overlaps).toEqual([]);
  });

  test('a dead holder is out at once, and nothing it sent afterwards counts', () => {
    const log = new WorkLog();
    log.enter('billing/leader', 'replica-1:pid1', 1);
    log.abandon('replica-1:pid1');
    expect(log.enter('billing/leader', 'replica-2:pid2', 2)).not.toBeNull();
    expect(log.enter('billing/leader', 'replica-1:pid1', 1)).toBeNull();
    expect(log.summary(0, () => true).overlaps).toEqual([]);
  });

  test('summaries count from a mark and filter by resource', () => {
    const log = new WorkLog();
    log.leave(log.enter('invoice/A', 'r1', 1)!.seq);
    const mark = log.mark();
    log.leave(log.enter('invoice/A', 'r1', 2)!.seq);
    log.leave(log.enter('customer/acme', 'r1', 1)!.seq);
    expect(log.summary(mark, (resource) => resource.startsWith('invoice/')).entries).toBe(1);
  });
});
