import { LockConfigError } from '../shared/errors.js';

/**
 * The AWS SDK packages are optional peer dependencies: importing @latch/core must work for a
 * user who installed only one of them (or neither). Stores load their SDK on first request,
 * once: `load` runs again only after a failure (a package installed meanwhile is then found).
 */
export function optionalModule<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

/**
 * What a failed `import()` of an optional package becomes: the LockConfigError naming the
 * package to install when it is not installed, the error itself for anything else (a broken
 * install must show its own cause).
 */
export function missingPackageError(packageName: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
    return new LockConfigError(
      `This store needs the package ${packageName}; install it next to @latch/core.`,
    );
  }
  return error;
}
