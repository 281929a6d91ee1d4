import { GetObjectCommand, HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, startS3Server } from '../src/index.js';
import { bodyText, expectS3Error, rawRequest, s3Client, sdkError } from './s3-helpers.js';

const Bucket = 'guarded';
const ALLOWED = 'AKIAALLOWEDEXAMPLE01';
const DENIED = 'AKIADENIEDEXAMPLE001';
const UNKNOWN = 'AKIAUNKNOWNEXAMPLE01';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

/** A real SDK client on `server` that signs with `accessKeyId`; one attempt, so a refusal is final. */
function clientAs(server: S3Server, accessKeyId: string) {
  return s3Client(server, { credentials: { accessKeyId, secretAccessKey: SECRET }, maxAttempts: 1 });
}

describe('startS3Server({ accessKeys })', () => {
  let server: S3Server;
  beforeAll(async () => {
    server = await startS3Server({ bucket: Bucket, accessKeys: { [ALLOWED]: 'allow', [DENIED]: 'deny' } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves requests signed with an allowed key', async () => {
    const s3 = clientAs(server, ALLOWED);
    try {
      await s3.send(new PutObjectCommand({ Bucket, Key: 'allowed', Body: 'in' }));
      const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'allowed' }));
      expect(await bodyText(got.Body)).toBe('in');
    } finally {
      s3.destroy();
    }
  });

  it('answers a denied key 403 AccessDenied, before the request reaches a bucket', async () => {
    const s3 = clientAs(server, DENIED);
    server.resetRequestLog();
    try {
      await expectS3Error(
        s3.send(new PutObjectCommand({ Bucket, Key: 'denied', Body: 'x' })),
        'AccessDenied',
        403,
      );
      await expectS3Error(
        s3.send(new GetObjectCommand({ Bucket: 'no-such-bucket', Key: 'k' })),
        'AccessDenied',
        403,
      );
      // HEAD answers have no body: the SDK knows the refusal by its status alone.
      const head = await sdkError(s3.send(new HeadBucketCommand({ Bucket })));
      expect(head.$metadata?.httpStatusCode).toBe(403);
    } finally {
      s3.destroy();
    }
    expect(server.requestLog.map(({ op, status }) => ({ op, status }))).toEqual([
      { op: 'PutObject', status: 403 },
      { op: 'GetObject', status: 403 },
      { op: 'HeadBucket', status: 403 },
    ]);
    const allowed = clientAs(server, ALLOWED);
    try {
      await expectS3Error(allowed.send(new GetObjectCommand({ Bucket, Key: 'denied' })), 'NoSuchKey', 404);
    } finally {
      allowed.destroy();
    }
  });

  it('answers a key it does not know 403 InvalidAccessKeyId, naming the key as S3 does', async () => {
    const s3 = clientAs(server, UNKNOWN);
    try {
      const error = await sdkError(s3.send(new GetObjectCommand({ Bucket, Key: 'allowed' })));
      expect({ name: error.name, status: error.$metadata?.httpStatusCode }).toEqual({
        name: 'InvalidAccessKeyId',
        status: 403,
      });
      expect(error.message).toBe('The AWS Access Key Id you provided does not exist in our records.');
    } finally {
      s3.destroy();
    }
    const raw = await rawRequest(server, {
      method: 'GET',
      path: `/${Bucket}/allowed`,
      headers: {
        authorization: `AWS4-HMAC-SHA256 Credential=${UNKNOWN}/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00`,
      },
    });
    expect(raw.status).toBe(403);
    expect(raw.code).toBe('InvalidAccessKeyId');
    expect(raw.body).toContain(`<AWSAccessKeyId>${UNKNOWN}</AWSAccessKeyId>`);
  });

  it('reads the key of a presigned URL, and refuses an unsigned request with AccessDenied', async () => {
    const presigned = (key: string) =>
      rawRequest(server, {
        method: 'GET',
        path: `/${Bucket}/allowed?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${key}%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=00`,
      });
    expect((await presigned(ALLOWED)).status).toBe(200);
    expect((await presigned(DENIED)).code).toBe('AccessDenied');
    expect((await presigned(UNKNOWN)).code).toBe('InvalidAccessKeyId');
    const unsigned = await rawRequest(server, { method: 'GET', path: `/${Bucket}/allowed` });
    expect({ status: unsigned.status, code: unsigned.code }).toEqual({ status: 403, code: 'AccessDenied' });
  });

  it("allows clientConfig()'s own key unless it is listed as 'deny'", async () => {
    const s3 = s3Client(server);
    try {
      await s3.send(new HeadBucketCommand({ Bucket }));
    } finally {
      s3.destroy();
    }
    const locked = await startS3Server({
      bucket: Bucket,
      accessKeys: { [server.clientConfig().credentials.accessKeyId]: 'deny' },
    });
    const refused = s3Client(locked, { maxAttempts: 1 });
    try {
      await expectS3Error(refused.send(new GetObjectCommand({ Bucket, Key: 'k' })), 'AccessDenied', 403);
    } finally {
      refused.destroy();
      await locked.stop();
    }
  });
});

describe('startS3Server() without accessKeys', () => {
  it('accepts any access key', async () => {
    const server = await startS3Server({ bucket: Bucket });
    try {
      for (const key of [ALLOWED, DENIED, UNKNOWN, 'anything-at-all']) {
        const s3 = clientAs(server, key);
        try {
          await s3.send(new PutObjectCommand({ Bucket, Key: key, Body: key }));
          expect(await bodyText((await s3.send(new GetObjectCommand({ Bucket, Key: key }))).Body)).toBe(key);
        } finally {
          s3.destroy();
        }
      }
      const unsigned = await rawRequest(server, { method: 'GET', path: `/${Bucket}/${ALLOWED}` });
      expect(unsigned.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('startS3Server() checks accessKeys', () => {
  it.each([
    [{ [ALLOWED]: 'yes' }, `startS3Server(): accessKeys.${ALLOWED} must be "allow" or "deny", not "yes"`],
    [{ [DENIED]: true }, `startS3Server(): accessKeys.${DENIED} must be "allow" or "deny", not true`],
    [[ALLOWED], 'startS3Server(): accessKeys must be an object of access key ids to "allow" or "deny"'],
    [null, 'startS3Server(): accessKeys must be an object of access key ids to "allow" or "deny"'],
  ])('refuses %j', async (accessKeys, message) => {
    await expect(startS3Server({ accessKeys } as never)).rejects.toThrow(new TypeError(message));
  });

  it('refuses a misspelled option name, naming accessKeys', async () => {
    await expect(startS3Server({ accesKeys: {} } as never)).rejects.toThrow(
      'startS3Server(): unknown option accesKeys; did you mean accessKeys?',
    );
  });
});
