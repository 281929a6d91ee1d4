import { LockConfigError } from '../shared/errors.js';

/**
 * The AWS SDK packages are optional peer dependencies: importing @latch/core must work for a
 * user who installed only one of them (or neither). Stores load their SDK on first request.
 */
export function optionalModule<T>(packageName: string, load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
        throw new LockConfigError(
          `This store needs the package ${packageName}; install it next to @latch/core.`,
        );
      }
      throw error;
    });
    return loading;
  };
}

/** The S3 SDK, loaded once for every S3 store. */
export const loadS3Sdk: () => Promise<typeof import('@aws-sdk/client-s3')> = optionalModule(
  '@aws-sdk/client-s3',
  () => import('@aws-sdk/client-s3'),
);

/** The DynamoDB SDK, loaded once for dynamoStore and ensureLockTable. */
export const loadDynamoSdk: () => Promise<typeof import('@aws-sdk/client-dynamodb')> = optionalModule(
  '@aws-sdk/client-dynamodb',
  () => import('@aws-sdk/client-dynamodb'),
);
