/**
 * What the public options need of an AWS SDK v3 client, written without naming an SDK package,
 * so that Latch's declarations compile (with `skipLibCheck: false`) for a user who installed
 * only `@aws-sdk/client-s3` or only `@aws-sdk/client-dynamodb`. A real client fits; each store
 * uses the SDK's own types inside.
 */
interface AwsClient {
  send(command: never, options?: never): Promise<unknown>;
}

/** An `S3Client` from `@aws-sdk/client-s3` (its config is what tells it from other clients). */
export interface S3ClientLike extends AwsClient {
  config: { forcePathStyle?: unknown };
}

/** A `DynamoDBClient` from `@aws-sdk/client-dynamodb`. */
export interface DynamoDBClientLike extends AwsClient {
  config: { endpointDiscoveryEnabled?: unknown };
}
