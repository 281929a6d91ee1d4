// What a failed AWS SDK v3 call means, told from the error's name, HTTP status and network code.

/**
 * What an AWS SDK v3 error means for a lock store. The stores turn `conflict` and
 * `missing-object` into outcomes; everything else becomes a LockStoreError.
 */
export type AwsErrorKind =
  /** The condition did not hold (S3 412, DynamoDB ConditionalCheckFailedException). */
  | 'conflict'
  /** S3 says the object is not there (NoSuchKey / 404). */
  | 'missing-object'
  /** The bucket or table does not exist (or is not reachable at this endpoint/region). */
  | 'missing-resource'
  /** The bucket exists in another region than the client's. */
  | 'wrong-region'
  /** The client has no region at all (the SDK refuses to send). */
  | 'no-region'
  /** IAM said no. */
  | 'access-denied'
  /** The credentials themselves were rejected (unknown key, bad signature, expired token), or none were found. */
  | 'bad-credentials'
  /** Throttled or a concurrent conditional request won: certainly not applied, try again later. */
  | 'throttled'
  /** 501 NotImplemented: the service lacks a feature the request uses (not applied). */
  | 'not-implemented'
  /** A server-side failure: the request may have been applied. */
  | 'server-error'
  /** The connection broke or timed out after the request may have been sent. */
  | 'network'
  /** Failed before the request was sent (refused, unknown host, rejected certificate): nothing reached the service. */
  | 'unreachable'
  /** The service rejected the request as invalid (4xx we do not otherwise know): not applied. */
  | 'rejected'
  /** Anything else (no HTTP status, unknown shape). */
  | 'unknown';

/** The fields of an SDK v3 error we look at; every one may be missing on foreign errors. */
export interface AwsErrorShape {
  name?: string;
  code?: string;
  message?: string;
  cause?: unknown;
  $fault?: string;
  $metadata?: { httpStatusCode?: number; attempts?: number };
}

const CONFLICT = new Set(['PreconditionFailed', 'ConditionalCheckFailedException']);
const MISSING_RESOURCE = new Set(['NoSuchBucket', 'ResourceNotFoundException']);
const WRONG_REGION = new Set([
  'PermanentRedirect',
  'AuthorizationHeaderMalformed',
  'IllegalLocationConstraintException',
]);
const ACCESS_DENIED = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'AllAccessDisabled',
  'AccountProblem',
]);
const BAD_CREDENTIALS = new Set([
  'UnrecognizedClientException',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidSignatureException',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidToken',
  'TokenRefreshRequired',
  'MissingAuthenticationToken',
  'MissingAuthenticationTokenException',
  'IncompleteSignature',
  'IncompleteSignatureException',
  'InvalidClientTokenId',
  'CredentialsProviderError',
]);
const THROTTLED = new Set([
  'SlowDown',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'Throttling',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'TransactionConflictException',
  'ReplicatedWriteConflictException',
  // S3 409s: another conditional request on the same key was in flight; ours was not applied.
  'ConditionalRequestConflict',
  'OperationAborted',
  // S3 400: the server gave up waiting for our request body, so nothing was stored.
  'RequestTimeout',
]);
// Failures after which a write may or may not have landed.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_STREAM_PREMATURE_CLOSE',
]);
const NETWORK_NAMES = new Set(['TimeoutError', 'AbortError', 'RequestTimeoutException']);
// Failures before any byte of the request left the process, whatever the system call.
const NEVER_SENT_CODES = new Set([
  // The name did not resolve, so there was nowhere to send to.
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EAI_FAIL',
  // Node checks the server's certificate when the handshake ends and destroys the socket
  // before the request written to it is flushed.
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'HOSTNAME_MISMATCH',
]);
// Before sending only when the failing system call was the connect itself: on an open
// connection the same codes can follow a request that was sent. Even a refusal: Linux keeps
// an ICMP "port unreachable" met on an open connection, and reports it as ECONNREFUSED on a
// read once its retransmissions of a request that may have landed give up.
const NEVER_SENT_ON_CONNECT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);
// The SDK's own connectionTimeout destroys a request whose socket never connected.
const SDK_CONNECT_TIMEOUT = /did not establish a connection/;

export function classifyAwsError(error: unknown): AwsErrorKind {
  const e = shape(error);
  const name = e.name ?? '';
  const status = e.$metadata?.httpStatusCode;
  if (CONFLICT.has(name) || status === 412) return 'conflict';
  if (MISSING_RESOURCE.has(name)) return 'missing-resource';
  if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) return 'missing-object';
  if (WRONG_REGION.has(name) || status === 301) return 'wrong-region';
  // Thrown by the SDK's region resolver before anything is sent: a plain Error, no status.
  if (status === undefined && e.message === 'Region is missing') return 'no-region';
  if (BAD_CREDENTIALS.has(name)) return 'bad-credentials';
  if (ACCESS_DENIED.has(name) || status === 403) return 'access-denied';
  if (THROTTLED.has(name) || status === 429) return 'throttled';
  if (failedBeforeSending(error)) return 'unreachable';
  const code = networkCode(error);
  // Only without an answer: a gateway's 5xx may name its own upstream's network failure.
  const networkFailed = (code !== undefined && NETWORK_CODES.has(code)) || NETWORK_NAMES.has(name);
  if (status === undefined && networkFailed) return 'network';
  if (/socket hang up|other side closed|premature close/i.test(e.message ?? '')) return 'network';
  // Before any other 5xx: a 501 says the request was understood and refused, so it was not applied.
  if (name === 'NotImplemented' || status === 501) return 'not-implemented';
  if (status !== undefined && status >= 500) return 'server-error';
  if (status !== undefined && status >= 400) return 'rejected';
  return 'unknown';
}

/**
 * True only when this error certainly came before any byte of the request was sent: a refused
 * connection, a name that did not resolve, a certificate the client rejected, a connect that
 * timed out. When in doubt, false: the request may have reached the service.
 */
export function failedBeforeSending(error: unknown): boolean {
  const e = shape(error);
  // An HTTP answer, whatever its body says (a gateway's 502 may name ECONNREFUSED), proves the
  // request was sent.
  if (
    e.$metadata?.httpStatusCode !== undefined ||
    (error as { $response?: unknown }).$response !== undefined
  ) {
    return false;
  }
  // Node's connect tries every address of a name (autoSelectFamily) and reports all failures.
  const each = (error as { errors?: unknown }).errors;
  if (error instanceof AggregateError && Array.isArray(each) && each.length > 0) {
    return each.every(failedBeforeSending);
  }
  if (e.name === 'TimeoutError' && SDK_CONNECT_TIMEOUT.test(e.message ?? '')) return true;
  const failure = networkFailure(error);
  if (failure === undefined) return false;
  if (NEVER_SENT_CODES.has(failure.code)) return true;
  return NEVER_SENT_ON_CONNECT.has(failure.code) && failure.syscall === 'connect';
}

/** HTTP attempts the SDK made for this call (its retry middleware records them on the error). */
export function attemptsOf(error: unknown): number {
  const attempts = shape(error).$metadata?.attempts;
  return typeof attempts === 'number' && attempts > 0 ? attempts : 1;
}

export function shape(error: unknown): AwsErrorShape {
  return typeof error === 'object' && error !== null ? (error as AwsErrorShape) : {};
}

/** Node puts errno codes on `code`; the SDK sometimes wraps them in `cause`. */
function networkCode(error: unknown): string | undefined {
  return networkFailure(error)?.code;
}

function networkFailure(error: unknown): { code: string; syscall?: string } | undefined {
  for (let e = shape(error), depth = 0; depth < 5; e = shape(e.cause), depth++) {
    if (typeof e.code === 'string') {
      const { syscall } = e as { syscall?: unknown };
      return typeof syscall === 'string' ? { code: e.code, syscall } : { code: e.code };
    }
    if (e.cause === undefined) break;
  }
  return undefined;
}
