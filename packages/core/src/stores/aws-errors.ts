import { LockStoreError, type LockStoreErrorReason } from '../shared/errors.js';
import { redactSecrets } from '../shared/redact-secrets.js';
import { earlierAttemptMayHaveLanded } from './aws-attempts.js';
import { classifyAwsError, shape } from './aws-error-kind.js';

/** What the store was doing, to name it in messages. */
export interface AwsOperation {
  service: 's3' | 'dynamodb';
  /** API action, e.g. 'PutObject', 'UpdateItem'. */
  action: string;
  /** True when the request changes state: only then can an ambiguous failure have "applied". */
  write: boolean;
  /** Bucket or table name. */
  resource: string;
  /** The lock key, when there is one. */
  key?: string;
  /** How to create the missing bucket/table, appended to that message. */
  createHint?: string;
  /** The key schema the store expects of its DynamoDB table, e.g. 'a string partition key "pk" and no sort key'. */
  keySchema?: string;
}

// What DynamoDB (and DynamoDB Local) answer when a request's key does not fit the table's key
// schema: other attribute names, a sort key too many or too few, another key type.
const KEY_SCHEMA_MISMATCH =
  /key element does not match the schema|required keys was not given a value|number of conditions on the keys is invalid|missing the key|type mismatch for key/i;

/** Names the operations of one store on one bucket or table, for error messages. */
export function awsOperations(
  service: AwsOperation['service'],
  resource: string,
  createHint: string,
  keySchema?: string,
): (action: string, key: string, write: boolean) => AwsOperation {
  return (action, key, write) => ({
    service,
    action,
    write,
    resource,
    key,
    createHint,
    ...(keySchema === undefined ? {} : { keySchema }),
  });
}

/**
 * Turns a failed SDK call into a LockStoreError that says what broke and what to do, with
 * `retryable` (worth trying again later), `maybeApplied` (a write that may have landed) and
 * `reason` (outage, throttling, or a configuration to fix). The SDK's message is redacted of
 * anything that looks like a credential; bucket, table and endpoint names stay.
 */
export function toLockStoreError(error: unknown, op: AwsOperation): LockStoreError {
  const kind = classifyAwsError(error);
  const e = shape(error);
  const what = `${serviceName(op)} ${op.action}${op.key === undefined ? '' : ` for lock "${op.key}"`}`;
  const detail = redactSecrets(`${e.name ?? 'Error'}: ${e.message ?? String(error)}`);
  // The SDK retried after an earlier attempt failed: unless that attempt certainly failed
  // before sending, it may have been applied, whatever the last one said.
  const retried = op.write && earlierAttemptMayHaveLanded(error);
  const fail = (
    message: string,
    retryable: boolean,
    maybeApplied: boolean,
    code: string,
    reason: LockStoreErrorReason,
  ) =>
    new LockStoreError(message, {
      cause: error,
      retryable,
      maybeApplied: maybeApplied || retried,
      code,
      reason,
    });

  switch (kind) {
    case 'missing-resource':
      return fail(
        `${what} failed: ${resourceLabel(op)} does not exist (or is not ACTIVE) at this endpoint and region. ${op.createHint ?? ''}`.trim(),
        false,
        false,
        'LOCK_STORE_NOT_FOUND',
        'misconfigured',
      );
    case 'wrong-region':
      return fail(
        `${what} failed: ${resourceLabel(op)} is in a different region than the client. Create the client with the bucket's region. (${detail})`,
        false,
        false,
        'LOCK_STORE_CONFIG',
        'misconfigured',
      );
    case 'no-region':
      return fail(
        `${what} was not sent: the client has no region. Create it with the region of ${resourceLabel(op)} ({ region: '…' }, or AWS_REGION in its environment). (${detail})`,
        false,
        false,
        'LOCK_STORE_CONFIG',
        'misconfigured',
      );
    case 'access-denied':
      return fail(
        `${what} failed: access denied to ${resourceLabel(op)}. Grant ${iamActions(op)} to the credentials of the client you passed. (${detail})`,
        false,
        false,
        'LOCK_STORE_ACCESS_DENIED',
        'denied',
      );
    case 'bad-credentials':
      if (e.name === 'CredentialsProviderError') {
        // Raised by the client's credential provider before anything is sent.
        return fail(
          `${what} was not sent: the client found no credentials (${detail}). Give the client you passed credentials (environment variables, a shared config profile, or an instance or task role); it needs ${iamActions(op)} on ${resourceLabel(op)}.`,
          false,
          false,
          'LOCK_STORE_ACCESS_DENIED',
          'denied',
        );
      }
      return fail(
        `${what} failed: the client's credentials were rejected (${detail}). Check the access key, secret, session token and clock of the client you passed; it needs ${iamActions(op)} on ${resourceLabel(op)}.`,
        false,
        false,
        'LOCK_STORE_ACCESS_DENIED',
        'denied',
      );
    case 'throttled':
      return fail(
        `${what} was throttled or contended; retry later. (${detail})`,
        true,
        false,
        'LOCK_STORE_THROTTLED',
        'throttled',
      );
    case 'unreachable':
      return fail(
        `${what} could not connect to ${serviceName(op)}${retried ? '; an earlier attempt got further, so the write may have been applied' : ''}. (${detail})`,
        true,
        false,
        'LOCK_STORE_NETWORK',
        'unavailable',
      );
    case 'network':
      return fail(
        `${what} failed in transit${op.write ? '; the write may have been applied' : ''}. (${detail})`,
        true,
        op.write,
        'LOCK_STORE_NETWORK',
        'unavailable',
      );
    case 'not-implemented':
      return fail(
        `${what} was refused: ${serviceName(op)} at this endpoint does not implement a feature the request uses (501 NotImplemented; S3-compatible stores without conditional writes answer so). Latch cannot lock safely there: use a store with conditional writes (or s3ListStore), and run \`latch doctor\` to see what the store supports. (${detail})`,
        false,
        false,
        'LOCK_STORE_UNSUPPORTED',
        'misconfigured',
      );
    case 'server-error':
      return fail(
        `${what} failed with a server error${op.write ? '; the write may have been applied' : ''}. (${detail})`,
        true,
        op.write,
        'LOCK_STORE',
        'unavailable',
      );
    case 'rejected':
      if (op.keySchema !== undefined && KEY_SCHEMA_MISMATCH.test(e.message ?? '')) {
        return fail(
          `${what} was rejected: the key schema of ${resourceLabel(op)} is not the one the store uses, which expects ${op.keySchema}. Pass the table's key attribute names as dynamoStore({ partitionKey, sortKey }), or use a table with that key. (${detail})`,
          false,
          false,
          'LOCK_STORE_CONFIG',
          'misconfigured',
        );
      }
      // Latch sends only requests a correctly set-up store accepts: a refusal means the store is
      // not what the client expects (a table's key schema, an endpoint without a feature).
      return fail(
        `${what} was rejected by ${resourceLabel(op)}; check that the store is set up as the client expects. (${detail})`,
        false,
        false,
        'LOCK_STORE',
        'misconfigured',
      );
    default:
      // An error without an HTTP status we do not recognise: we cannot tell whether a write
      // reached the service, so say it may have.
      return fail(`${what} failed. (${detail})`, false, op.write, 'LOCK_STORE', 'unknown');
  }
}

function serviceName(op: AwsOperation): string {
  return op.service === 's3' ? 'S3' : 'DynamoDB';
}

function resourceLabel(op: AwsOperation): string {
  return op.service === 's3' ? `S3 bucket "${op.resource}"` : `DynamoDB table "${op.resource}"`;
}

function iamActions(op: AwsOperation): string {
  if (op.service === 'dynamodb') return `dynamodb:${op.action}`;
  switch (op.action) {
    // Without s3:ListBucket, S3 answers 403 instead of 404 for a lock that does not exist yet.
    case 'GetObject':
      return 's3:GetObject and s3:ListBucket';
    // ListObjectsV2 is authorised by the bucket-level ListBucket permission.
    case 'ListObjectsV2':
      return 's3:ListBucket';
    // S3 requires both for a DeleteObject conditional on an ETag.
    case 'DeleteObject':
      return 's3:DeleteObject and s3:GetObject';
    default:
      return `s3:${op.action}`;
  }
}
