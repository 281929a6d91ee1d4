import { LockConfigError } from '@latch/core';
import { describe, expect, test } from 'vitest';
import { compileLockKey } from '../src/key-template.js';

const keyOf = (template: unknown, ...args: unknown[]) =>
  compileLockKey(template, 'Shop.buy', undefined)(args);

describe('key templates', () => {
  test.each([
    ['invoice:{0}', ['42'], 'invoice:42'],
    ['invoice:{0}', [42], 'invoice:42'],
    ['user:{0.id}', [{ id: 'u-1' }], 'user:u-1'],
    ['org/{0.org.id}/user/{1}', [{ org: { id: 'o-9' } }, 'u-2'], 'org/o-9/user/u-2'],
    ['{1}-{0}', ['a', 'b'], 'b-a'],
    ['reports/daily', [], 'reports/daily'],
    ['{0}', ['whole'], 'whole'],
    // Values are escaped: a request value cannot reach another part of the key.
    ['org/{0}/user/{1}', ['o9/user/admin', 'u2'], 'org/o9%2Fuser%2Fadmin/user/u2'],
    ['invoice:{0}', ['../1'], 'invoice:%2E%2E%2F1'],
    ['invoice:{0}', [1.5], 'invoice:1%2E5'],
  ])('%s with %j is %s', (template, args, key) => {
    expect(keyOf(template, ...args)).toBe(key);
  });

  test.each([
    ['invoice:{0}', [], 'needs {0} to be a non-empty string or a finite number, but argument 0 is undefined'],
    ['invoice:{0}', [''], 'argument 0 is ""'],
    ['invoice:{0}', [Number.NaN], 'argument 0 is NaN'],
    ['invoice:{0}', [{ id: 1 }], 'argument 0 is an object. Name one of its properties, as in {0.id}'],
    ['user:{0.id}', [{}], 'argument 0.id is undefined'],
    ['user:{0.org.id}', [{ org: null }], 'argument 0.org is null'],
    ['user:{0.id}', [undefined], 'argument 0 is undefined'],
  ])('%s with %j is refused', (template, args, message) => {
    const build = () => keyOf(template, ...args);
    expect(build).toThrow(LockConfigError);
    expect(build).toThrow(message);
    expect(build).toThrow('Shop.buy');
  });

  test('a bigint argument is written in full', () => {
    expect(keyOf('invoice:{0}', 12345678901234567890n)).toBe('invoice:12345678901234567890');
  });

  test('a key function gets the arguments and must return a non-empty string', () => {
    expect(keyOf((id: string, n: number) => `cart/${id}/${n}`, 'c-1', 3)).toBe('cart/c-1/3');
    expect(() => keyOf(() => '')).toThrow(
      'The key function of @Locked() on Shop.buy must return a non-empty string',
    );
    expect(() => keyOf(() => 7)).toThrow('returned 7');
  });
});
