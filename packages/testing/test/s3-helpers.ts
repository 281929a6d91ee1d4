import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import {
  CompleteMultipartUploadCommand,
  type CompleteMultipartUploadCommandInput,
  CreateMultipartUploadCommand,
  type CreateMultipartUploadCommandInput,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect } from 'vitest';
import { type S3Server, type S3ServerOptions, startS3Server } from '../src/s3/server.js';

/** A real AWS SDK v3 client pointed at the test server. */
export function s3Client(server: S3Server, overrides: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({ ...server.clientConfig(), ...overrides });
}

/** One test file's server and SDK client; read them in hooks and tests, not while tests are collected. */
export interface LocalS3 {
  readonly server: S3Server;
  readonly s3: S3Client;
}

/** Starts a server and a client for it before the file's tests, and stops both after them. */
export function useS3Server(options: S3ServerOptions = {}): LocalS3 {
  let started: LocalS3 | undefined;
  beforeAll(async () => {
    const server = await startS3Server(options);
    started = { server, s3: s3Client(server) };
  });
  afterAll(async () => {
    started?.s3.destroy();
    await started?.server.stop();
  });
  const current = () => {
    if (!started) throw new Error('useS3Server: the server is only there while the tests run');
    return started;
  };
  return {
    get server() {
      return current().server;
    },
    get s3() {
      return current().s3;
    },
  };
}

/** The error an SDK call rejected with; fails the test when it resolved. */
export async function sdkError(
  promise: Promise<unknown>,
): Promise<Error & { $metadata?: { httpStatusCode?: number }; Code?: string }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { $metadata?: { httpStatusCode?: number } };
  }
  throw new Error('expected the S3 call to fail, but it succeeded');
}

/** Asserts an SDK call fails with the given error name and HTTP status. */
export async function expectS3Error(promise: Promise<unknown>, name: string, status: number): Promise<void> {
  const err = await sdkError(promise);
  expect({ name: err.name, status: err.$metadata?.httpStatusCode }).toEqual({ name, status });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** `<Code>` of an S3 error document, if the body is one. */
  code: string | undefined;
}

export interface RawRequest {
  method: string;
  /** Sent verbatim as the request target, so malformed escapes reach the server untouched. */
  path: string;
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  timeoutMs?: number;
}

/** One plain HTTP request; rejects (never hangs) after `timeoutMs`. */
export function rawRequest(server: S3Server, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const r = request(
      {
        host: server.host,
        port: server.port,
        method: req.method,
        path: req.path,
        headers: req.headers,
        agent: false,
        timeout: req.timeoutMs ?? 5000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            code: /<Code>([^<]*)<\/Code>/.exec(body)?.[1],
          });
        });
        res.on('error', reject);
      },
    );
    r.on('timeout', () => r.destroy(new Error(`no answer within ${req.timeoutMs ?? 5000} ms`)));
    r.on('error', reject);
    r.end(req.body);
  });
}

export async function bodyText(body: { transformToString(): Promise<string> } | undefined): Promise<string> {
  if (!body) throw new Error('response has no body');
  return body.transformToString();
}

/**
 * Stores many small objects (body = key) over plain keep-alive HTTP. Several times faster than the SDK,
 * which keeps fixture setup for the big listing tests short; the behaviour under test is exercised
 * through the SDK separately.
 */
export async function putManyRaw(server: S3Server, bucket: string, keys: readonly string[]): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const queue = [...keys];
  const putOne = (key: string) =>
    new Promise<void>((resolve, reject) => {
      const path = `/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
      const body = Buffer.from(key);
      const r = request(
        {
          host: server.host,
          port: server.port,
          method: 'PUT',
          path,
          agent,
          headers: { 'content-length': body.length },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`PUT ${key}: ${res.statusCode}`)),
          );
        },
      );
      r.setTimeout(5000, () => r.destroy(new Error(`PUT ${key} timed out`)));
      r.on('error', reject);
      r.end(body);
    });
  try {
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let key = queue.shift(); key !== undefined; key = queue.shift()) await putOne(key);
      }),
    );
  } finally {
    agent.destroy();
  }
}

/** 5 MiB: the smallest a part may be, unless it is the last one. */
export const MIN_PART = 5 * 1024 * 1024;

/**
 * The ETag S3 gives a multipart object, computed here independently of the server: the MD5 of the
 * parts' binary MD5s, then `-<part count>`.
 */
export function multipartEtag(parts: readonly Buffer[]): string {
  const md5s = parts.map((p) => createHash('md5').update(p).digest());
  return `"${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-${parts.length}"`;
}

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Create, upload every part (numbered from 1), complete: a whole multipart upload through the SDK. */
export async function uploadInParts(
  s3: S3Client,
  input: CreateMultipartUploadCommandInput & { Bucket: string; Key: string },
  parts: readonly Buffer[],
  complete: Partial<CompleteMultipartUploadCommandInput> = {},
) {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand(input));
  const uploaded = [];
  for (const [i, Body] of parts.entries()) {
    const { ETag } = await s3.send(
      new UploadPartCommand({ Bucket: input.Bucket, Key: input.Key, UploadId, PartNumber: i + 1, Body }),
    );
    uploaded.push({ PartNumber: i + 1, ETag });
  }
  return s3.send(
    new CompleteMultipartUploadCommand({
      Bucket: input.Bucket,
      Key: input.Key,
      UploadId,
      MultipartUpload: { Parts: uploaded },
      ...complete,
    }),
  );
}
