import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { NoSuchBucket, NoSuchKey, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { LockStoreError, type LockStoreErrorReason } from '../../src/shared/errors.js';
import { attemptsOf, classifyAwsError } from '../../src/stores/aws-error-kind.js';
import { type AwsOperation, toLockStoreError } from '../../src/stores/aws-errors.js';

// Errors the real SDK classes would throw for these answers; the stores' tests produce most of
// them from real servers too, these cover the ones local servers cannot produce.
const meta = (httpStatusCode: number, attempts = 1) => ({ $metadata: { httpStatusCode, attempts } });
const s3Error = (name: string, status: number, fault: 'client' | 'server' = 'client') =>
  new S3ServiceException({ name, message: `${name} from S3`, $fault: fault, ...meta(status) });
const dynamoError = (name: string, status = 400, fault: 'client' | 'server' = 'client') =>
  new DynamoDBServiceException({ name, message: `${name} from DynamoDB`, $fault: fault, ...meta(status) });
const nodeError = (message: string, code?: string, name = 'Error') =>
  Object.assign(new Error(message), { name }, code ? { code } : {});

const onSyscall = (error: Error, syscall: string) => Object.assign(error, { syscall });
const refusedOnConnect = (message: string) => onSyscall(nodeError(message, 'ECONNREFUSED'), 'connect');

// What the SDK's default credential chain throws when it finds nothing (@smithy/property-provider).
const credentialsProviderError = () =>
  Object.assign(new Error('Could not load credentials from any providers'), {
    name: 'CredentialsProviderError',
    tryNextLink: false,
  });

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
    ['no region', new Error('Region is missing'), 'no-region'],
    ['S3 AccessDenied', s3Error('AccessDenied', 403), 'access-denied'],
    ['DynamoDB AccessDenied', dynamoError('AccessDeniedException'), 'access-denied'],
    ['unknown key', dynamoError('UnrecognizedClientException'), 'bad-credentials'],
    ['S3 bad key id', s3Error('InvalidAccessKeyId', 403), 'bad-credentials'],
    ['S3 bad signature', s3Error('SignatureDoesNotMatch', 403), 'bad-credentials'],
    ['expired token', s3Error('ExpiredToken', 400), 'bad-credentials'],
    ['no credentials', credentialsProviderError(), 'bad-credentials'],
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
    ['refused', onSyscall(nodeError('connect ECONNREFUSED', 'ECONNREFUSED'), 'connect'), 'unreachable'],
    // An ICMP "port unreachable" met on an open connection, reported on a read once the
    // retransmissions of a request that may have landed gave up.
    ['refused on read', onSyscall(nodeError('read ECONNREFUSED', 'ECONNREFUSED'), 'read'), 'network'],
    ['refused, no system call named', nodeError('ECONNREFUSED', 'ECONNREFUSED'), 'network'],
    // A gateway's answer naming its own upstream failure: the request was sent.
    [
      'a 502 whose body names ECONNREFUSED',
      Object.assign(s3Error('BadGateway', 502, 'server'), { code: 'ECONNREFUSED' }),
      'server-error',
    ],
    ['no such host', nodeError('getaddrinfo ENOTFOUND', 'ENOTFOUND'), 'unreachable'],
    [
      'rejected certificate',
      nodeError('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT'),
      'unreachable',
    ],
    [
      'no route on connect',
      onSyscall(nodeError('connect EHOSTUNREACH', 'EHOSTUNREACH'), 'connect'),
      'unreachable',
    ],
    // On an open connection, after the request may have gone out.
    ['no route on read', onSyscall(nodeError('read EHOSTUNREACH', 'EHOSTUNREACH'), 'read'), 'network'],
    ['connect timed out', onSyscall(nodeError('connect ETIMEDOUT', 'ETIMEDOUT'), 'connect'), 'unreachable'],
    [
      'every address refused',
      Object.assign(new AggregateError([refusedOnConnect('a'), refusedOnConnect('b')]), {
        code: 'ECONNREFUSED',
      }),
      'unreachable',
    ],
    [
      'one address refused, one reset',
      Object.assign(new AggregateError([refusedOnConnect('a'), nodeError('b', 'ECONNRESET')]), {
        code: 'ECONNREFUSED',
      }),
      'network',
    ],
    [
      'the SDK connection timeout',
      nodeError(
        'the request socket did not establish a connection with the server within 100 ms',
        undefined,
        'TimeoutError',
      ),
      'unreachable',
    ],
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
      [refusedOnConnect('connect ECONNREFUSED'), putObject, { retryable: true, maybeApplied: false }],
      [
        onSyscall(nodeError('read ECONNREFUSED', 'ECONNREFUSED'), 'read'),
        putObject,
        { retryable: true, maybeApplied: true },
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

  it("names the key a DynamoDB store expects when AWS's answer says the key does not fit the table", () => {
    const op: AwsOperation = {
      service: 'dynamodb',
      action: 'UpdateItem',
      write: true,
      resource: 'locks',
      key: 'k',
      keySchema: 'a string partition key "pk" and no sort key',
    };
    for (const message of [
      'The provided key element does not match the schema',
      'One or more parameter values were invalid: Missing the key pk in the item',
      'One or more parameter values were invalid: Type mismatch for key pk expected: N actual: S',
    ]) {
      const error = toLockStoreError(Object.assign(dynamoError('ValidationException'), { message }), op);
      expect(error).toMatchObject({
        code: 'LOCK_STORE_CONFIG',
        reason: 'misconfigured',
        maybeApplied: false,
      });
      expect(error.message).toContain('which expects a string partition key "pk" and no sort key');
    }
    // Any other refusal keeps the general message.
    const other = toLockStoreError(
      Object.assign(dynamoError('ValidationException'), { message: 'Item size too large' }),
      op,
    );
    expect(other).toMatchObject({ code: 'LOCK_STORE' });
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

describe('toLockStoreError reason', () => {
  const dynamoGet: AwsOperation = { service: 'dynamodb', action: 'GetItem', write: false, resource: 'locks' };
  const table: [string, unknown, AwsOperation, LockStoreErrorReason][] = [
    ['S3 NoSuchBucket', new NoSuchBucket({ message: 'x', ...meta(404) }), putObject, 'misconfigured'],
    [
      'DynamoDB missing table',
      new ResourceNotFoundException({ message: 'x', ...meta(400) }),
      dynamoGet,
      'misconfigured',
    ],
    ['S3 wrong region', s3Error('PermanentRedirect', 301), getObject, 'misconfigured'],
    ['no region', new Error('Region is missing'), putObject, 'misconfigured'],
    ['invalid request', dynamoError('ValidationException'), dynamoGet, 'misconfigured'],
    ['S3 AccessDenied', s3Error('AccessDenied', 403), putObject, 'denied'],
    ['S3 bare 403', s3Error('Forbidden', 403), getObject, 'denied'],
    ['DynamoDB AccessDenied', dynamoError('AccessDeniedException'), dynamoGet, 'denied'],
    ['S3 unknown key', s3Error('InvalidAccessKeyId', 403), putObject, 'denied'],
    ['S3 bad signature', s3Error('SignatureDoesNotMatch', 403), putObject, 'denied'],
    ['expired token', s3Error('ExpiredToken', 400), putObject, 'denied'],
    ['DynamoDB unknown key', dynamoError('UnrecognizedClientException'), dynamoGet, 'denied'],
    ['no credentials', credentialsProviderError(), putObject, 'denied'],
    ['S3 SlowDown', s3Error('SlowDown', 503, 'server'), putObject, 'throttled'],
    [
      'DynamoDB throughput',
      new ProvisionedThroughputExceededException({ message: 'x', ...meta(400) }),
      dynamoGet,
      'throttled',
    ],
    ['refused', refusedOnConnect('connect ECONNREFUSED 127.0.0.1:1'), putObject, 'unavailable'],
    ['no such host', nodeError('getaddrinfo ENOTFOUND s3.invalid', 'ENOTFOUND'), getObject, 'unavailable'],
    ['timed out', nodeError('connect ETIMEDOUT', 'ETIMEDOUT'), putObject, 'unavailable'],
    ['request timeout', nodeError('request timed out', undefined, 'TimeoutError'), getObject, 'unavailable'],
    ['reset', nodeError('read ECONNRESET', 'ECONNRESET'), putObject, 'unavailable'],
    ['S3 500', s3Error('InternalError', 500, 'server'), putObject, 'unavailable'],
    ['a plain error', new Error('???'), putObject, 'unknown'],
  ];
  it.each(table)('%s', (_, cause, op, reason) => {
    const error = toLockStoreError(cause, op);
    expect(error.reason).toBe(reason);
    expect(error.isConfigurationError).toBe(reason === 'misconfigured' || reason === 'denied');
    // Configuration errors are never worth retrying; outages and throttling are.
    if (error.isConfigurationError) expect(error.retryable).toBe(false);
    if (reason === 'unavailable' || reason === 'throttled') expect(error.retryable).toBe(true);
  });

  it('says when the client found no credentials or has no region, and that nothing was sent', () => {
    const noCredentials = toLockStoreError(credentialsProviderError(), putObject);
    expect(noCredentials.message).toMatch(/was not sent: the client found no credentials/);
    expect(noCredentials.message).toContain('Could not load credentials from any providers');
    expect(noCredentials).toMatchObject({
      retryable: false,
      maybeApplied: false,
      code: 'LOCK_STORE_ACCESS_DENIED',
    });
    const noRegion = toLockStoreError(new Error('Region is missing'), putObject);
    expect(noRegion.message).toMatch(/was not sent: the client has no region/);
    expect(noRegion).toMatchObject({ retryable: false, maybeApplied: false, code: 'LOCK_STORE_CONFIG' });
  });

  it('keeps credentials out of its message', () => {
    const accessKeyId = 'AKIAIOSFODNN7EXAMPLE';
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const signature = 'fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024';
    const leaky = s3Error('SignatureDoesNotMatch', 403);
    leaky.message = `Signature mismatch for ${accessKeyId} (secret ${secret}); Signature=${signature}, X-Amz-Security-Token=IQoJb3JpZ2luX2VjEJr%2F`;
    const error = toLockStoreError(leaky, putObject);
    for (const secretText of [accessKeyId, secret, signature, 'IQoJb3JpZ2luX2VjEJr']) {
      expect(error.message).not.toContain(secretText);
    }
    expect(error.message).toContain('[redacted]');
    // Names an operator needs stay.
    expect(error.message).toContain('S3 bucket "bkt"');
    expect(error.message).toContain('lock "k"');
  });
});
