import { describe, expect, test } from 'vitest';
import { contentionDelayMs } from '../src/backoff.js';

const backoff = { baseMs: 100, maxMs: 1000 };

describe('contentionDelayMs', () => {
  test('doubles the ceiling with every delay, up to maxMs', () => {
    const ceilings = [0, 1, 2, 3, 4, 10, 1000].map((delays) => contentionDelayMs(delays, backoff, () => 1));
    expect(ceilings).toEqual([100, 200, 400, 800, 1000, 1000, 1000]);
  });

  test('draws from the upper half of the ceiling, so a delay is never near zero', () => {
    expect(contentionDelayMs(0, backoff, () => 0)).toBe(50);
    expect(contentionDelayMs(3, backoff, () => 0)).toBe(400);
    expect(contentionDelayMs(3, backoff, () => 0.5)).toBe(600);
  });

  test('spreads jobs that met the same holder', () => {
    const delays = new Set(Array.from({ length: 50 }, () => contentionDelayMs(5, backoff)));
    expect(delays.size).toBeGreaterThan(10);
    for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(500);
  });
});
