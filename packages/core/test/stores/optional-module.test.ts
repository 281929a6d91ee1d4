import { describe, expect, it } from 'vitest';
import { LockConfigError } from '../../src/shared/errors.js';
import { optionalModule } from '../../src/stores/optional-module.js';

describe('optionalModule', () => {
  it('loads once and shares the module', async () => {
    let loads = 0;
    const load = optionalModule('node:path', async () => {
      loads++;
      return import('node:path');
    });
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(b);
    expect(loads).toBe(1);
  });

  it('says which package to install when it is missing', async () => {
    // A specifier in a variable, so that nothing resolves it ahead of time.
    const missing = '@latch/no-such-package-for-this-test';
    const load = optionalModule('@aws-sdk/client-s3', () => import(missing));
    const error = await load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toContain('install it next to @latch/core');
    expect((error as Error).message).toContain('@aws-sdk/client-s3');
  });

  it('passes other load failures through, and tries again next time', async () => {
    let attempt = 0;
    const load = optionalModule('x', async () => {
      if (++attempt === 1) throw new SyntaxError('broken module');
      return 'loaded';
    });
    await expect(load()).rejects.toBeInstanceOf(SyntaxError);
    await expect(load()).resolves.toBe('loaded');
  });
});
