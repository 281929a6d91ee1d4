import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { LockConfigError } from '../../src/shared/errors.js';
import { missingPackageError, optionalModule } from '../../src/stores/optional-module.js';

describe('optionalModule', () => {
  it('loads once and shares the module', async () => {
    let loads = 0;
    const load = optionalModule(async () => {
      loads++;
      return import('node:path');
    });
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(b);
    expect(loads).toBe(1);
  });

  it('passes a load failure through, and tries again next time', async () => {
    let attempt = 0;
    const load = optionalModule(async () => {
      if (++attempt === 1) throw new SyntaxError('broken module');
      return 'loaded';
    });
    await expect(load()).rejects.toBeInstanceOf(SyntaxError);
    await expect(load()).resolves.toBe('loaded');
  });
});

describe('missingPackageError', () => {
  it('says which package to install when an import finds nothing', async () => {
    // A specifier in a variable, so that nothing resolves it ahead of time.
    const missing = '@latch/no-such-package-for-this-test';
    const failure = await import(missing).catch((e: unknown) => e);
    const error = missingPackageError('@aws-sdk/client-s3', failure);
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toBe(
      'This store needs the package @aws-sdk/client-s3; install it next to @latch/core.',
    );
  });

  it('says the same when a require finds nothing (the CommonJS build loads the SDK with require)', () => {
    let failure: unknown;
    try {
      createRequire(import.meta.url)('@latch/no-such-package-for-this-test');
    } catch (error) {
      failure = error;
    }
    const error = missingPackageError('@aws-sdk/client-dynamodb', failure);
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toContain('@aws-sdk/client-dynamodb; install it next to @latch/core');
  });

  it('leaves any other failure as it is', () => {
    const broken = new SyntaxError('broken module');
    expect(missingPackageError('@aws-sdk/client-s3', broken)).toBe(broken);
  });
});
