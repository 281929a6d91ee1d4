import { expect, test } from 'vitest';
import { escapeKeyPart, LockConfigError } from '../src/index.js';

test('keeps plain ids readable and encodes everything else one-to-one', () => {
  expect(escapeKeyPart('INV-1001_a')).toBe('INV-1001_a');
  expect(escapeKeyPart('../admin')).toBe('%2E%2E%2Fadmin');
  expect(escapeKeyPart('a/b')).not.toBe(escapeKeyPart('a%2Fb'));
  expect(escapeKeyPart('a.b')).not.toBe(escapeKeyPart('a%2Eb'));
  expect(escapeKeyPart("x!~*'()")).toBe('x%21%7E%2A%27%28%29');
  expect(escapeKeyPart('é')).toBe('%C3%A9');
  for (const value of ['../x', 'a:b', 'tenant/1', '%2F', ' ', '\0']) {
    expect(escapeKeyPart(value)).toMatch(/^[A-Za-z0-9_%-]+$/);
  }
});

test('a lone surrogate or a non-string is a LockConfigError', () => {
  expect(() => escapeKeyPart('\uD800')).toThrow(LockConfigError);
  expect(() => escapeKeyPart(42 as never)).toThrow(/must be a string/);
});
