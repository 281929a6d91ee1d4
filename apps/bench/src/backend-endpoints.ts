/** Where the local backends of one bench run listen; sent to every worker process. */
export interface BackendEndpoints {
  /** S3 server with conditional writes. */
  s3?: { endpoint: string; bucket: string };
  /** S3 server without conditional writes, for the S3 list strategy. */
  s3Plain?: { endpoint: string; bucket: string };
  /** DynamoDB Local, with one table per library (each wants its own schema). */
  dynamodb?: { endpoint: string; tables: DynamoTables };
  redis?: { url: string };
}

export interface DynamoTables {
  /** Latch: partition key `pk`. */
  latch: string;
  /** dynamodb-lock-client: partition key `id`. */
  dynamodbLockClient: string;
  /** @deliveryhero/dynamodb-lock: partition key `lockId`, sort key `lockGroup`. */
  deliveryhero: string;
}

/** Any credentials work with the local servers; the SDKs insist on having some. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'bench', secretAccessKey: 'bench' } as const;
export const LOCAL_REGION = 'us-east-1';
