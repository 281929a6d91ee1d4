import { createRequire } from 'node:module';
import { describe, expect, test } from 'vitest';

// Both builds of the package, loaded into one process as an app that mixes import and require
// would: errors made by one must still be known to the other's classes.
const esm = await import('../dist/index.js');
const cjs = createRequire(import.meta.url)('../dist/cjs/index.js') as typeof esm;
const http = {
  esm: await import('../dist/http.js'),
  cjs: createRequire(import.meta.url)('../dist/cjs/http.js') as typeof import('../dist/http.js'),
};

describe('error classes across the ES module and CommonJS builds', () => {
  test('the builds are separate copies', () => {
    expect(cjs.LockStoreError).not.toBe(esm.LockStoreError);
  });

  test.each([
    ['CommonJS', 'ES module', cjs, esm, http.esm],
    ['ES module', 'CommonJS', esm, cjs, http.cjs],
  ] as const)(
    'an error made by the %s build is an instance of the %s build classes',
    (_from, _to, from, to, toHttp) => {
      const error = new from.LockStoreError('S3 PutObject failed', {
        retryable: true,
        reason: 'unavailable',
      });
      expect(error).toBeInstanceOf(to.LockStoreError);
      expect(error).toBeInstanceOf(to.LockError);
      expect(error).not.toBeInstanceOf(to.LockTimeoutError);
      expect(error).not.toBeInstanceOf(to.LockConfigError);
      expect(new from.LockConfigError('bad')).toBeInstanceOf(to.LockConfigError);
      // The other copy's answers follow: a store error is answered 503, not passed on as unknown.
      expect(toHttp.lockErrorToHttp(error)?.status).toBe(503);
    },
  );

  test('other errors are not taken for Latch errors', () => {
    expect(new Error('x')).not.toBeInstanceOf(esm.LockError);
    expect(Object.assign(new Error('x'), { name: 'LockStoreError' })).not.toBeInstanceOf(esm.LockStoreError);
    expect(null).not.toBeInstanceOf(esm.LockError);
  });
});
