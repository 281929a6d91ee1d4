import { describe, expect, test } from 'vitest';
import { findOverlaps, type HoldInterval } from '../src/overlap.js';

const hold = (holder: string, acquiredAt: number, releasedAt: number, key = 'k'): HoldInterval => ({
  key,
  holder,
  acquiredAt,
  releasedAt,
});

describe('findOverlaps', () => {
  test('catches two holders on one key at the same time', () => {
    const overlaps = findOverlaps([hold('p0c0', 0, 10), hold('p1c0', 8, 20)]);
    expect(overlaps).toHaveLength(1);
    expect(overlaps[0]).toMatchObject({ key: 'k', overlapMs: 2 });
    expect(overlaps[0]!.first.holder).toBe('p0c0');
    expect(overlaps[0]!.second.holder).toBe('p1c0');
  });

  test('catches a hold nested inside a longer one, whatever the order recorded', () => {
    const overlaps = findOverlaps([hold('b', 12, 14), hold('c', 30, 31), hold('a', 10, 50)]);
    expect(overlaps.map((o) => [o.first.holder, o.second.holder])).toEqual([
      ['a', 'b'],
      ['a', 'c'],
    ]);
  });

  test('catches an overlap with an earlier long hold after a short one in between', () => {
    // a reaches past b's end: c overlaps a even though it starts after b ended.
    const overlaps = findOverlaps([hold('a', 0, 100), hold('b', 10, 20), hold('c', 30, 40)]);
    expect(overlaps).toHaveLength(2);
    expect(overlaps.every((o) => o.first.holder === 'a')).toBe(true);
  });

  test('back-to-back holds and holds on different keys are not overlaps', () => {
    expect(
      findOverlaps([
        hold('a', 0, 10),
        hold('b', 10, 20),
        hold('c', 25, 30),
        hold('x', 0, 30, 'other'),
        hold('y', 5, 6, 'third'),
      ]),
    ).toEqual([]);
  });

  test('refuses an interval that ends before it starts', () => {
    expect(() => findOverlaps([hold('a', 10, 5)])).toThrow(/ends before it starts/);
  });
});
