import { missingPackageError, optionalModule } from './optional-module.js';

/**
 * The DynamoDB SDK, loaded on the first request of dynamoStore or ensureLockTable. A literal
 * `import()` inside try/await, in a file of its own, for the reasons s3-sdk.ts gives: bundled
 * when installed, left out (and a LockConfigError at run time) when not.
 */
export const loadDynamoSdk: () => Promise<typeof import('@aws-sdk/client-dynamodb')> = optionalModule(
  async () => {
    try {
      return await import('@aws-sdk/client-dynamodb');
    } catch (error) {
      throw missingPackageError('@aws-sdk/client-dynamodb', error);
    }
  },
);
