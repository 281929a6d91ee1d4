import { LockConfigError, LockLostError, LockStoreError, LockTimeoutError } from './errors.js';

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

/**
 * Maps Latch errors to HTTP, so every web adapter answers the same way:
 * held → 423 Locked with Retry-After (seconds until the holder's lease ends, at least 1);
 * lost mid-request → 409; bad key from the request → 400; store trouble → 503.
 * Returns undefined for errors that are not Latch's. Holder identities are not exposed.
 */
export function lockErrorToHttp(error: unknown, now: number = Date.now()): LockHttpAnswer | undefined {
  const json = { 'Content-Type': 'application/problem+json' };
  if (error instanceof LockTimeoutError) {
    const expiresAt = error.holder?.expiresAt;
    const headers: Record<string, string> = { ...json };
    const body: ProblemDetails = {
      type: 'urn:latch:problem:locked',
      title: 'Locked',
      status: 423,
      detail: 'The resource is locked by another operation in progress. Retry later.',
    };
    if (expiresAt !== undefined && expiresAt !== null) {
      const seconds = Math.max(1, Math.ceil((expiresAt - now) / 1000));
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
  if (error instanceof LockStoreError) {
    return {
      status: 503,
      headers: { ...json, 'Retry-After': '1' },
      body: {
        type: 'urn:latch:problem:lock-store-unavailable',
        title: 'Service Unavailable',
        status: 503,
        detail: 'The lock store could not be reached. Retry later.',
      },
    };
  }
  return undefined;
}
