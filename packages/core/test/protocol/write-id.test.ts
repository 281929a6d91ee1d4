import { expect, test } from 'vitest';
import { isWriterId, seqOf, writeIdOf } from '../../src/protocol/write-id.js';

test("a writer recognises its own writes by sequence number, and no one else's", () => {
  expect(seqOf(writeIdOf('w1', 7), 'w1')).toBe(7);
  expect(seqOf(writeIdOf('w1', 7), 'w')).toBeUndefined();
  expect(seqOf(writeIdOf('w1', 7), 'w1:7')).toBeUndefined();
  expect(seqOf(writeIdOf('w10', 3), 'w1')).toBeUndefined();
});

test('ids an older client wrote (no writer prefix) never match a writer', () => {
  expect(seqOf('3f9a0c1e-77aa-4b1d-9b1e-0c8d2f6e1a55', '3f9a0c1e')).toBeUndefined();
  expect(seqOf('w1', 'w1')).toBeUndefined();
  expect(seqOf('w1:', 'w1')).toBeUndefined();
  expect(seqOf('w1:0', 'w1')).toBeUndefined();
  expect(seqOf('w1:01', 'w1')).toBeUndefined();
  expect(seqOf('w1:1x', 'w1')).toBeUndefined();
});

test('a writer id cannot hold the separator', () => {
  expect(isWriterId('a7c2')).toBe(true);
  expect(isWriterId('a:b')).toBe(false);
  expect(isWriterId('')).toBe(false);
});
