import type { LockStoreError } from '@latch/core';
import type { Env } from './aws-settings.js';
import type { StoreUrl } from './store-url.js';

/**
 * What went wrong with the store, as far as a CLI user can fix it. Core's messages speak to
 * programmers (`s3Store({ bucket })`, "the client you passed"); the CLI speaks of its own
 * --store URL and of the AWS environment instead.
 */
type StoreProblem =
  | 'missing-resource'
  | 'no-credentials'
  | 'bad-credentials'
  | 'access-denied'
  | 'wrong-region';

// SDK error names (the LockStoreError's `cause`), as AWS documents them.
const NO_CREDENTIALS = new Set(['CredentialsProviderError']);
const BAD_CREDENTIALS = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'InvalidClientTokenId',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidToken',
  'TokenRefreshRequired',
  'IncompleteSignature',
  'IncompleteSignatureException',
  'MissingAuthenticationToken',
  'MissingAuthenticationTokenException',
]);
const MISSING_RESOURCE = new Set(['NoSuchBucket', 'ResourceNotFoundException']);
const WRONG_REGION = new Set([
  'PermanentRedirect',
  'AuthorizationHeaderMalformed',
  'IllegalLocationConstraintException',
]);

/**
 * Sorts a store failure by the LockStoreError's `code` and the name of the SDK error kept as
 * its `cause`. When core's LockStoreError carries its own classification (a `reason` such as
 * "denied" or "misconfigured"), this is where to read it; the CLI still needs the cause's name
 * to tell "no credentials found" from "credentials rejected".
 */
function classify(error: LockStoreError): StoreProblem | undefined {
  const cause = causeName(error);
  if (NO_CREDENTIALS.has(cause) || /could not load credentials/i.test(causeMessage(error))) {
    return 'no-credentials';
  }
  if (BAD_CREDENTIALS.has(cause)) return 'bad-credentials';
  if (error.code === 'LOCK_STORE_NOT_FOUND' || MISSING_RESOURCE.has(cause)) return 'missing-resource';
  if (WRONG_REGION.has(cause)) return 'wrong-region';
  if (error.code === 'LOCK_STORE_ACCESS_DENIED') return 'access-denied';
  return undefined;
}

/**
 * The CLI's words for a store failure on `store`, or undefined when it has none better than
 * core's message (outages, throttling, unreadable records...).
 */
export function describeStoreError(
  error: LockStoreError,
  store: StoreUrl | undefined,
  env: Env,
): string | undefined {
  if (store === undefined || store.kind === 'memory') return undefined;
  const problem = classify(error);
  const url = storeUrlText(store);
  switch (problem) {
    case 'missing-resource':
      if (store.kind === 'dynamodb') {
        return `table "${store.table}" does not exist (or is still being created); create it with a string partition key "pk", e.g. ${createTableCommand(store.table, env)}, or fix the store URL ${url}`;
      }
      return `bucket "${store.bucket}" does not exist; create it, or fix the store URL ${url}`;
    case 'no-credentials':
      return 'no AWS credentials were found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary ones) or AWS_PROFILE, or run where a role provides them (in GitHub Actions: aws-actions/configure-aws-credentials)';
    case 'bad-credentials':
      // The SDK's own message may quote the access key id: only its name is shown.
      return `the AWS credentials were rejected (${causeName(error)}); check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or AWS_PROFILE, and that this machine's clock is right`;
    case 'access-denied':
      return `access denied to ${resourceText(store)}: the AWS credentials in use need ${permissions(store)}`;
    case 'wrong-region':
      if (store.kind === 'dynamodb') return undefined;
      return `bucket "${store.bucket}" is in another region than AWS_REGION (${env.AWS_REGION ?? 'not set'}); set AWS_REGION to the bucket's region`;
    default:
      return undefined;
  }
}

function causeName(error: Error): string {
  const name = (error.cause as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : '';
}

function causeMessage(error: Error): string {
  const message = (error.cause as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : '';
}

/** The store as a --store URL: s3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table. */
function storeUrlText(store: Exclude<StoreUrl, { kind: 'memory' }>): string {
  if (store.kind === 'dynamodb') return `dynamodb://${store.table}`;
  const prefix = store.prefix.replace(/\/$/, '');
  return `${store.kind}://${store.bucket}${prefix ? `/${prefix}` : ''}`;
}

function resourceText(store: Exclude<StoreUrl, { kind: 'memory' }>): string {
  return store.kind === 'dynamodb' ? `table "${store.table}"` : `bucket "${store.bucket}"`;
}

/** What each store needs, as the core README lists it. */
function permissions(store: Exclude<StoreUrl, { kind: 'memory' }>): string {
  switch (store.kind) {
    case 'dynamodb':
      return `dynamodb:GetItem, dynamodb:PutItem and dynamodb:UpdateItem on table ${store.table}`;
    case 's3':
      return `s3:GetObject and s3:PutObject on ${store.bucket}/${store.prefix}*, and s3:ListBucket on bucket ${store.bucket}`;
    case 's3+list':
      return `s3:GetObject, s3:PutObject and s3:DeleteObject on ${store.bucket}/${store.prefix}*, and s3:ListBucket on bucket ${store.bucket}`;
  }
}

/** The AWS CLI command that creates the table latch expects, pointed at the same endpoint. */
function createTableCommand(table: string, env: Env): string {
  const endpoint = env.AWS_ENDPOINT_URL_DYNAMODB || env.AWS_ENDPOINT_URL;
  return [
    'aws dynamodb create-table',
    `--table-name ${table}`,
    '--attribute-definitions AttributeName=pk,AttributeType=S',
    '--key-schema AttributeName=pk,KeyType=HASH',
    '--billing-mode PAY_PER_REQUEST',
    ...(endpoint ? [`--endpoint-url ${endpoint}`] : []),
  ].join(' ');
}
