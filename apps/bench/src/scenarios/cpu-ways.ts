import { Agent, request } from 'node:http';
import { DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { dynamoStore, LockClient, type LockStore, s3Store } from '@latch/core';
import { type BackendEndpoints, LOCAL_CREDENTIALS, LOCAL_REGION } from '../backend-endpoints.js';
import { RequestTally } from '../counting/request-tally.js';
import { countSdkV3Requests } from '../counting/sdk-v3.js';

/** One way of doing an uncontended cycle's requests on a fresh key. */
export interface CpuWayRunner {
  label: string;
  cycle(key: string): Promise<void>;
}

export interface CpuWays {
  latch: CpuWayRunner;
  sdk: CpuWayRunner;
  http: CpuWayRunner;
  /** Requests sent by the Latch and SDK ways (both clients are counted alike). */
  latchRequests: RequestTally;
  close(): void;
}

/** A lock record's size: the bare calls send about as many bytes as Latch does. */
const BODY = JSON.stringify({ owner: 'c0ffee00-0000-4000-8000-000000000000', expiresAt: 0, token: 1 });

/**
 * The three ways for one store. Latch: LockClient defaults, acquire + release. Bare SDK:
 * the two calls Latch's cycle makes (S3: two conditional PutObjects, the second on the ETag
 * of the first; DynamoDB: a conditional UpdateItem, then a conditional PutItem). Raw HTTP:
 * the same two requests built by hand on node:http, with no signing (the local servers do not
 * check signatures).
 */
export function openCpuWays(store: 's3' | 'dynamodb', backends: BackendEndpoints): CpuWays {
  return store === 's3' ? s3Ways(backends) : dynamoWays(backends);
}

function latchWay(store: LockStore): CpuWayRunner {
  const locks = new LockClient({ store });
  return {
    label: 'Latch acquire + release',
    async cycle(key) {
      const lock = await locks.acquire(key);
      await lock.release();
    },
  };
}

function s3Ways(backends: BackendEndpoints): CpuWays {
  if (!backends.s3) throw new Error('The cpu scenario on S3 needs the S3 server.');
  const { endpoint, bucket } = backends.s3;
  const tally = new RequestTally();
  const newClient = () => {
    const client = new S3Client({
      endpoint,
      forcePathStyle: true,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    countSdkV3Requests(client, tally);
    return client;
  };
  const latchClient = newClient();
  const sdkClient = newClient();
  const agent = new Agent({ keepAlive: true });
  const url = new URL(endpoint);
  return {
    // verify: false: the local server stands in for AWS, where the default sends no probe.
    latch: latchWay(s3Store({ client: latchClient, bucket, prefix: 'cpu-latch/', verify: false })),
    sdk: {
      label: 'PutObject x 2',
      async cycle(key) {
        const Key = `cpu-sdk/${key}`;
        const first = await sdkClient.send(
          new PutObjectCommand({ Bucket: bucket, Key, Body: BODY, IfNoneMatch: '*' }),
        );
        await sdkClient.send(new PutObjectCommand({ Bucket: bucket, Key, Body: BODY, IfMatch: first.ETag! }));
      },
    },
    http: {
      label: 'PUT x 2',
      async cycle(key) {
        const path = `/${bucket}/cpu-http/${encodeURIComponent(key)}`;
        const first = await send(agent, url, 'PUT', path, { 'if-none-match': '*' }, BODY);
        await send(agent, url, 'PUT', path, { 'if-match': String(first.etag) }, BODY);
      },
    },
    latchRequests: tally,
    close() {
      latchClient.destroy();
      sdkClient.destroy();
      agent.destroy();
    },
  };
}

function dynamoWays(backends: BackendEndpoints): CpuWays {
  if (!backends.dynamodb) throw new Error('The cpu scenario on DynamoDB needs DynamoDB Local.');
  const { endpoint, tables } = backends.dynamodb;
  const table = tables.latch;
  const tally = new RequestTally();
  const newClient = () => {
    const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
    countSdkV3Requests(client, tally);
    return client;
  };
  const latchClient = newClient();
  const sdkClient = newClient();
  const agent = new Agent({ keepAlive: true });
  const url = new URL(endpoint);
  const claim = (key: string) => ({
    TableName: table,
    Key: { pk: { S: key } },
    UpdateExpression: 'SET #b = :b',
    ConditionExpression: 'attribute_not_exists(pk)',
    ExpressionAttributeNames: { '#b': 'body' },
    ExpressionAttributeValues: { ':b': { S: BODY } },
    ReturnValues: 'ALL_NEW' as const,
  });
  const release = (key: string) => ({
    TableName: table,
    Item: { pk: { S: key }, body: { S: BODY } },
    ConditionExpression: '#b = :b',
    ExpressionAttributeNames: { '#b': 'body' },
    ExpressionAttributeValues: { ':b': { S: BODY } },
  });
  // A well-formed but unchecked signature header: DynamoDB Local wants one to be present.
  const auth = `AWS4-HMAC-SHA256 Credential=${LOCAL_CREDENTIALS.accessKeyId}/20260101/${LOCAL_REGION}/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=${'0'.repeat(64)}`;
  const post = (operation: string, body: object) =>
    send(
      agent,
      url,
      'POST',
      '/',
      {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${operation}`,
        'x-amz-date': '20260101T000000Z',
        authorization: auth,
      },
      JSON.stringify(body),
    );
  return {
    latch: latchWay(dynamoStore({ client: latchClient, table, verify: false })),
    sdk: {
      label: 'UpdateItem + PutItem',
      async cycle(key) {
        await sdkClient.send(new UpdateItemCommand(claim(`cpu-sdk/${key}`)));
        await sdkClient.send(new PutItemCommand(release(`cpu-sdk/${key}`)));
      },
    },
    http: {
      label: 'POST x 2',
      async cycle(key) {
        await post('UpdateItem', claim(`cpu-http/${key}`));
        await post('PutItem', release(`cpu-http/${key}`));
      },
    },
    latchRequests: tally,
    close() {
      latchClient.destroy();
      sdkClient.destroy();
      agent.destroy();
    },
  };
}

/** One request on node:http; resolves with the response's ETag, rejects on a status >= 300. */
function send(
  agent: Agent,
  url: URL,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ etag: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 300) {
            reject(
              new Error(
                `${method} ${path}: HTTP ${status} ${Buffer.concat(chunks).toString().slice(0, 200)}`,
              ),
            );
          } else {
            const etag = res.headers.etag;
            resolve({ etag: Array.isArray(etag) ? etag[0] : etag });
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
