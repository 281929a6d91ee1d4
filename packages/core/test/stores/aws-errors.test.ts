import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { NoSuchBucket, NoSuchKey, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { LockStoreError } from '../../src/errors.js';
import {
  type AwsOperation,
  attemptsOf,
  classifyAwsError,
  toLockStoreError,
} from '../../src/stores/aws-errors.js';

// Errors the real SDK classes would throw for these answers; the stores' tests produce most of
// them from real servers too, these cover the ones local servers cannot produce.
const meta = (httpStatusCode: number, attempts = 1) => ({ $metadata: { httpStatusCode, attempts } });
const s3Error = (name: string, status: number, fault: 'client' | 'server' = 'client') =>
  new S3ServiceException({ name, message: `${name} from S3`, $fault: fault, ...meta(status) });
const dynamoError = (name: string, status = 400, fault: 'client' | 'server' = 'client') =>
  new DynamoDBServiceException({ name, message: `${name} from DynamoDB`, $fault: fault, ...meta(status) });
const nodeError = (message: string, code?: string, name = 'Error') =>
  Object.assign(new Error(message), { name }, code ? { code } : {});

const putObject: AwsOperation = {
  service: 's3',
  action: 'PutObject',
  write: true,
  resource: 'bkt',
  key: 'k',
};
const getObject: AwsOperation = { ...putObject, action: 'GetObject', write: false };

describe('classifyAwsError', () => {
  const cases: [string, unknown, ReturnType<typeof classifyAwsError>][] = [
    ['S3 412', s3Error('PreconditionFailed', 412), 'conflict'],
    ['DynamoDB condition', new ConditionalCheckFailedException({ message: 'no', ...meta(400) }), 'conflict'],
    ['S3 NoSuchKey', new NoSuchKey({ message: 'gone', ...meta(404) }), 'missing-object'],
    ['S3 bare 404', s3Error('NotFound', 404), 'missing-object'],
    ['S3 NoSuchBucket', new NoSuchBucket({ message: 'no bucket', ...meta(404) }), 'missing-resource'],
    [
      'DynamoDB missing table',
      new ResourceNotFoundException({ message: 'no table', ...meta(400) }),
      'missing-resource',
    ],
    ['S3 wrong region', s3Error('PermanentRedirect', 301), 'wrong-region'],
    ['S3 AccessDenied', s3Error('AccessDenied', 403), 'access-denied'],
    ['DynamoDB AccessDenied', dynamoError('AccessDeniedException'), 'access-denied'],
    ['unknown key', dynamoError('UnrecognizedClientException'), 'bad-credentials'],
    ['S3 bad key id', s3Error('InvalidAccessKeyId', 403), 'bad-credentials'],
    ['S3 bad signature', s3Error('SignatureDoesNotMatch', 403), 'bad-credentials'],
    ['expired token', s3Error('ExpiredToken', 400), 'bad-credentials'],
    ['S3 SlowDown', s3Error('SlowDown', 503, 'server'), 'throttled'],
    ['S3 409', s3Error('ConditionalRequestConflict', 409), 'throttled'],
    [
      'DynamoDB throughput',
      new ProvisionedThroughputExceededException({ message: 'slow', ...meta(400) }),
      'throttled',
    ],
    ['DynamoDB throttling', dynamoError('ThrottlingException'), 'throttled'],
    ['DynamoDB request limit', dynamoError('RequestLimitExceeded'), 'throttled'],
    ['DynamoDB transaction conflict', dynamoError('TransactionConflictException'), 'throttled'],
    ['S3 500', s3Error('InternalError', 500, 'server'), 'server-error'],
    ['DynamoDB 500', dynamoError('InternalServerError', 500, 'server'), 'server-error'],
    ['reset', nodeError('read ECONNRESET', 'ECONNRESET'), 'network'],
    ['broken pipe', nodeError('write EPIPE', 'EPIPE'), 'network'],
    ['timed out', nodeError('connect ETIMEDOUT', 'ETIMEDOUT'), 'network'],
    ['hang up', nodeError('socket hang up'), 'network'],
    ['request timeout', nodeError('request timed out', undefined, 'TimeoutError'), 'network'],
    ['aborted', nodeError('aborted', undefined, 'AbortError'), 'network'],
    ['wrapped reset', Object.assign(new Error('failed'), { cause: nodeError('x', 'ECONNRESET') }), 'network'],
    ['refused', nodeError('connect ECONNREFUSED', 'ECONNREFUSED'), 'unreachable'],
    ['no such host', nodeError('getaddrinfo ENOTFOUND', 'ENOTFOUND'), 'unreachable'],
    ['invalid request', dynamoError('ValidationException'), 'rejected'],
    ['a plain error', new Error('???'), 'unknown'],
    ['not an error', 'oops', 'unknown'],
  ];
  it.each(cases)('%s', (_, error, kind) => {
    expect(classifyAwsError(error)).toBe(kind);
  });
});

describe('toLockStoreError', () => {
  it('keeps the cause and says whether a retry may help and whether the write may have landed', () => {
    const table: [unknown, AwsOperation, { retryable: boolean; maybeApplied: boolean }][] = [
      [s3Error('SlowDown', 503, 'server'), putObject, { retryable: true, maybeApplied: false }],
      [s3Error('ConditionalRequestConflict', 409), putObject, { retryable: true, maybeApplied: false }],
      [s3Error('InternalError', 500, 'server'), putObject, { retryable: true, maybeApplied: true }],
      [s3Error('InternalError', 500, 'server'), getObject, { retryable: true, maybeApplied: false }],
      [nodeError('socket hang up', 'ECONNRESET'), putObject, { retryable: true, maybeApplied: true }],
      [nodeError('socket hang up', 'ECONNRESET'), getObject, { retryable: true, maybeApplied: false }],
      [
        nodeError('connect ECONNREFUSED', 'ECONNREFUSED'),
        putObject,
        { retryable: true, maybeApplied: false },
      ],
      [s3Error('AccessDenied', 403), putObject, { retryable: false, maybeApplied: false }],
      [
        new NoSuchBucket({ message: 'x', ...meta(404) }),
        putObject,
        { retryable: false, maybeApplied: false },
      ],
      [new Error('???'), putObject, { retryable: false, maybeApplied: true }],
      [new Error('???'), getObject, { retryable: false, maybeApplied: false }],
    ];
    for (const [cause, op, expected] of table) {
      const error = toLockStoreError(cause, op);
      expect(error).toBeInstanceOf(LockStoreError);
      expect({ retryable: error.retryable, maybeApplied: error.maybeApplied }).toEqual(expected);
      expect(error.cause).toBe(cause);
    }
  });

  it('treats a write the SDK retried as possibly applied, whatever the last answer', () => {
    const throttled = new ProvisionedThroughputExceededException({ message: 'slow', ...meta(400, 3) });
    const write: AwsOperation = { service: 'dynamodb', action: 'PutItem', write: true, resource: 'locks' };
    expect(attemptsOf(throttled)).toBe(3);
    expect(toLockStoreError(throttled, write)).toMatchObject({ retryable: true, maybeApplied: true });
    expect(toLockStoreError(throttled, { ...write, action: 'GetItem', write: false })).toMatchObject({
      maybeApplied: false,
    });
  });

  it('names the IAM actions to grant when access is denied', () => {
    const denied = s3Error('AccessDenied', 403);
    expect(toLockStoreError(denied, getObject).message).toMatch(
      /S3 bucket "bkt".*s3:GetObject and s3:ListBucket/,
    );
    expect(toLockStoreError(denied, { ...putObject, action: 'DeleteObject' }).message).toContain(
      's3:DeleteObject and s3:GetObject',
    );
    const dynamo = toLockStoreError(dynamoError('AccessDeniedException'), {
      service: 'dynamodb',
      action: 'UpdateItem',
      write: true,
      resource: 'locks',
    });
    expect(dynamo.message).toMatch(/DynamoDB table "locks".*dynamodb:UpdateItem/);
    expect(dynamo.code).toBe('LOCK_STORE_ACCESS_DENIED');
    const badKey = toLockStoreError(dynamoError('UnrecognizedClientException'), {
      service: 'dynamodb',
      action: 'GetItem',
      write: false,
      resource: 'locks',
    });
    expect(badKey.message).toMatch(/credentials were rejected.*dynamodb:GetItem/);
    expect(badKey.retryable).toBe(false);
  });

  it('names the missing bucket or table and how to create it', () => {
    const error = toLockStoreError(new NoSuchBucket({ message: 'x', ...meta(404) }), {
      ...putObject,
      createHint: 'Create the bucket.',
    });
    expect(error.message).toContain('S3 bucket "bkt" does not exist');
    expect(error.message).toContain('Create the bucket.');
    expect(error.code).toBe('LOCK_STORE_NOT_FOUND');
  });
});
