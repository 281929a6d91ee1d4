import {
  LockConfigError,
  LockLimitMismatchError,
  LockLostError,
  LockStoreError,
  type LockStoreErrorReason,
  LockTimeoutError,
} from '../shared/errors.js';
import { redactCredentials } from '../shared/redact-secrets.js';

/** An RFC 9457 problem details body. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extension: string]: unknown;
}

/** How an HTTP adapter answers a lock error: status, headers and a problem+json body. */
export interface LockHttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: ProblemDetails;
}

/** Options of {@link lockErrorToHttp}. */
export interface LockHttpOptions {
  /**
   * The most a 423 Locked answer's Retry-After says, in whole seconds (at least 1). Without it,
   * Retry-After is the time until the holder's lease ends: right for a lock held for a lease,
   * far too long for one held for one request (a lease of 30 s, a route of 300 ms). The Express
   * and Nest adapters pass their `retryAfterSeconds` (default 1). Never more than the holder's
   * lease has left.
   */
  lockedRetryAfterSeconds?: number;
}

/**
 * Maps Latch errors to HTTP, so every web adapter answers the same way:
 * held → 423 Locked with Retry-After (seconds until the holder's lease ends, at least 1, and at
 * most `options.lockedRetryAfterSeconds`);
 * every slot of a semaphore (`limit` 2 or more) taken → 429 Too Many Requests with Retry-After 1;
 * holders of the key use another limit (a deployment mistake) → 500
 * `urn:latch:problem:lock-limit-mismatch`;
 * lost mid-request → 409; bad key from the request → 400; a store outage (unreachable,
 * throttled, client closed) → 503 with Retry-After; a store set up wrong (missing bucket or
 * table, no or rejected credentials, access denied, wrong region) → 500
 * `urn:latch:problem:lock-store-misconfigured`; any other store failure that retrying will not
 * cure → 500 `urn:latch:problem:lock-store-failed`. Returns undefined for errors that are not
 * Latch's. Holder identities, bucket and table names and the store's own messages are not
 * exposed: the client is not the operator (log them with {@link lockStoreLogEntry}).
 */
export function lockErrorToHttp(
  error: unknown,
  now: number = Date.now(),
  options: LockHttpOptions = {},
): LockHttpAnswer | undefined {
  const json = { 'Content-Type': 'application/problem+json' };
  if (error instanceof LockTimeoutError && error.limit !== undefined) {
    // A slot frees as soon as any holder finishes, which may be any moment: ask for a short wait.
    return {
      status: 429,
      headers: { ...json, 'Retry-After': '1' },
      body: {
        type: 'urn:latch:problem:limit-reached',
        title: 'Too Many Requests',
        status: 429,
        detail: `At most ${error.limit} of these operations may run at once, and all ${error.limit} are running. Retry shortly.`,
        retryAfterSeconds: 1,
      },
    };
  }
  if (error instanceof LockTimeoutError) {
    const expiresAt = error.holder?.expiresAt;
    const headers: Record<string, string> = { ...json };
    const body: ProblemDetails = {
      type: 'urn:latch:problem:locked',
      title: 'Locked',
      status: 423,
      detail: 'The resource is locked by another operation in progress. Retry later.',
    };
    const cap = checkRetryAfterSeconds(options.lockedRetryAfterSeconds);
    const leaseLeft =
      expiresAt !== undefined && expiresAt !== null
        ? Math.max(1, Math.ceil((expiresAt - now) / 1000))
        : undefined;
    // A fail-closed holder (or one on an untrusted clock) has no known end: the cap alone, if any.
    const seconds = leaseLeft === undefined ? cap : Math.min(leaseLeft, cap ?? leaseLeft);
    if (seconds !== undefined) {
      headers['Retry-After'] = String(seconds);
      body.retryAfterSeconds = seconds;
    }
    return { status: 423, headers, body };
  }
  if (error instanceof LockLostError) {
    return {
      status: 409,
      headers: json,
      body: {
        type: 'urn:latch:problem:lock-lost',
        title: 'Conflict',
        status: 409,
        detail:
          'The lock protecting this operation was lost before it finished; its effects may be incomplete.',
      },
    };
  }
  if (error instanceof LockLimitMismatchError) {
    // Two parts of the deployment disagree about the key's limit: the server's fault, not the request's.
    return {
      status: 500,
      headers: json,
      body: {
        type: 'urn:latch:problem:lock-limit-mismatch',
        title: 'Internal Server Error',
        status: 500,
        detail: 'This operation is set up with a different concurrency limit than others running it.',
      },
    };
  }
  if (error instanceof LockConfigError) {
    return {
      status: 400,
      headers: json,
      body: {
        type: 'urn:latch:problem:invalid-lock-key',
        title: 'Bad Request',
        status: 400,
        detail: error.message,
      },
    };
  }
  if (error instanceof LockStoreError) return storeAnswer(error);
  return undefined;
}

/** Retry-After is a whole number of seconds; a cap under 1 would tell clients to hammer. */
function checkRetryAfterSeconds(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new LockConfigError(
      `lockedRetryAfterSeconds must be a whole number of seconds, at least 1, got ${String(value)}.`,
    );
  }
  return value;
}

const UNAVAILABLE_DETAIL: Partial<Record<LockStoreErrorReason, string>> = {
  throttled: 'The lock store is busy. Retry later.',
  closed: 'The server is shutting down its lock client. Retry later.',
};

function storeAnswer(error: LockStoreError): LockHttpAnswer {
  const json = { 'Content-Type': 'application/problem+json' };
  if (error.isConfigurationError || (error.reason === 'unknown' && !error.retryable)) {
    const misconfigured = error.isConfigurationError;
    return {
      status: 500,
      headers: json,
      body: {
        type: misconfigured
          ? 'urn:latch:problem:lock-store-misconfigured'
          : 'urn:latch:problem:lock-store-failed',
        title: 'Internal Server Error',
        status: 500,
        detail: `${misconfigured ? 'The lock store is misconfigured' : 'The lock store failed'}. The server's operator should check the server log.`,
      },
    };
  }
  return {
    status: 503,
    headers: { ...json, 'Retry-After': '1' },
    body: {
      type: 'urn:latch:problem:lock-store-unavailable',
      title: 'Service Unavailable',
      status: 503,
      detail: UNAVAILABLE_DETAIL[error.reason] ?? 'The lock store could not be reached. Retry later.',
    },
  };
}

/** How a server logs a store failure that it answered with {@link lockErrorToHttp}. */
export interface LockStoreLogEntry {
  /**
   * `'error'` for a store set up wrong (`misconfigured`, `denied`) and for failures of unknown
   * kind that retrying will not cure; `'warn'` for outages, throttling and a closed client.
   */
  level: 'error' | 'warn';
  /**
   * One line: what kind of failure, its reason and code, and the store error's message (which
   * names the operation, lock key, bucket or table, and the SDK's error), with anything that
   * looks like a credential (access key ids, secrets, signatures, tokens) redacted.
   */
  message: string;
}

const SUMMARY: Record<LockStoreErrorReason, string> = {
  misconfigured: 'lock store misconfigured',
  denied: 'lock store access denied',
  unavailable: 'lock store unavailable',
  throttled: 'lock store throttled',
  closed: 'lock client closed',
  unknown: 'lock store failed',
};

/**
 * The log line for a store failure, so every adapter logs the same thing, e.g.
 * `lock store misconfigured (reason misconfigured, code LOCK_STORE_NOT_FOUND): S3 PutObject for
 * lock "invoice/7" failed: S3 bucket "locks" does not exist …`.
 */
export function lockStoreLogEntry(error: LockStoreError): LockStoreLogEntry {
  const answer = storeAnswer(error);
  const text = redactCredentials(error.message.replace(/\s+/g, ' ').trim());
  return {
    level: answer.status === 500 ? 'error' : 'warn',
    message: `${SUMMARY[error.reason] ?? SUMMARY.unknown} (reason ${error.reason}, code ${error.code}): ${text}`,
  };
}
