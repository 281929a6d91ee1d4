import { describe, expect, test } from 'vitest';
import { countHolders } from '../src/holders.js';
import { findOverlaps, type HoldInterval } from '../src/overlap.js';

const hold = (holder: string, acquiredAt: number, releasedAt: number, key = 'k'): HoldInterval => ({
  key,
  holder,
  acquiredAt,
  releasedAt,
});

describe('countHolders', () => {
  test('finds the acquisition that made a key held by 4 with limit 3', () => {
    const counted = countHolders([hold('a', 0, 10), hold('b', 1, 10), hold('c', 2, 10), hold('d', 3, 10)], 3);
    expect(counted.maxHolders).toBe(4);
    expect(counted.overLimit).toHaveLength(1);
    expect(counted.overLimit[0]!.acquisition.holder).toBe('d');
    expect(counted.overLimit[0]!.holders.map((h) => h.holder)).toEqual(['a', 'b', 'c', 'd']);
  });

  test('3 holders at once are within limit 3; a 4th after one left is too', () => {
    const counted = countHolders(
      [hold('a', 0, 10), hold('b', 1, 20), hold('c', 2, 20), hold('d', 11, 20)],
      3,
    );
    expect(counted).toEqual({ maxHolders: 3, overLimit: [] });
  });

  test('a hand-off at the same instant is not two holders; holders of other keys do not count', () => {
    const counted = countHolders(
      [hold('a', 0, 10), hold('b', 10, 20), hold('x', 0, 20, 'other'), hold('y', 5, 15, 'third')],
      1,
    );
    expect(counted).toEqual({ maxHolders: 1, overLimit: [] });
  });

  test('whatever order the holds were recorded in', () => {
    const counted = countHolders([hold('c', 2, 3), hold('a', 0, 50), hold('b', 1, 50)], 2);
    expect(counted.maxHolders).toBe(3);
    expect(counted.overLimit.map((o) => o.acquisition.holder)).toEqual(['c']);
  });

  test('with limit 1 it finds the acquisitions findOverlaps finds', () => {
    const holds = [hold('a', 0, 100), hold('b', 10, 20), hold('c', 30, 40), hold('d', 100, 110)];
    const overLimit = countHolders(holds, 1).overLimit.map((o) => o.acquisition.holder);
    expect(overLimit).toEqual(findOverlaps(holds).map((o) => o.second.holder));
    expect(overLimit).toEqual(['b', 'c']);
  });

  test('refuses an interval that ends before it starts', () => {
    expect(() => countHolders([hold('a', 10, 5)], 3)).toThrow(/ends before it starts/);
  });
});
