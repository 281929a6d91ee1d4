import { missingPackageError, optionalModule } from './optional-module.js';

/**
 * The S3 SDK, loaded on the first request of any S3 store.
 *
 * Why a literal `import()` inside try/await, in a file of its own: a bundler must see the
 * package's name to bundle it for an app that installed it, and must be able to leave it out
 * for an app that did not. esbuild and rolldown take an `await import()` inside `try` as allowed
 * to be missing: they bundle the package when it is there and otherwise leave the import, with
 * no warning, to run time (rollup leaves any unresolved import to run time, with a warning).
 * It then fails here, into the LockConfigError naming the package. A specifier hidden in a variable would build everywhere
 * too, but no bundler could then bundle the SDK, and a deployment without node_modules could
 * never load it. One file per SDK, so that a bundle that uses no S3 store tree-shakes it away.
 */
export const loadS3Sdk: () => Promise<typeof import('@aws-sdk/client-s3')> = optionalModule(async () => {
  try {
    return await import('@aws-sdk/client-s3');
  } catch (error) {
    throw missingPackageError('@aws-sdk/client-s3', error);
  }
});
