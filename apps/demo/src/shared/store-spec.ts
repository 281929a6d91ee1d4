/**
 * How a replica reaches the lock store the launcher chose. Plain JSON: it travels to each
 * replica on its command line.
 */
export type StoreSpec =
  | {
      kind: 's3';
      bucket: string;
      prefix: string;
      region?: string | undefined;
      /** Set for the embedded local S3 server; absent for Amazon S3 (default AWS credentials). */
      endpoint?: string | undefined;
    }
  | {
      kind: 'dynamodb';
      table: string;
      region?: string | undefined;
      /** Set for DynamoDB Local; absent for Amazon DynamoDB (default AWS credentials). */
      endpoint?: string | undefined;
    }
  /** The launcher holds a memoryStore() and answers store calls over the IPC channel. */
  | { kind: 'memory' };

/** For the local servers, which check no signatures; DynamoDB Local wants letters and digits only. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'latchdemo', secretAccessKey: 'latchdemo' } as const;

/** A one-line description for the terminal and the dashboard. */
export function describeStore(spec: StoreSpec): string {
  switch (spec.kind) {
    case 's3':
      return spec.endpoint
        ? `local S3 server with conditional writes (${spec.endpoint}, bucket "${spec.bucket}")`
        : `Amazon S3 (bucket "${spec.bucket}", prefix "${spec.prefix}")`;
    case 'dynamodb':
      return spec.endpoint
        ? `DynamoDB Local (${spec.endpoint}, table "${spec.table}")`
        : `Amazon DynamoDB (table "${spec.table}")`;
    case 'memory':
      return 'in-memory store hosted by the launcher (replicas reach it over IPC)';
  }
}
