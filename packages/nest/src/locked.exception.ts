import type { LockTimeoutError } from '@latch/core';
import { lockErrorToHttp } from '@latch/core/http';
import { HttpException } from '@nestjs/common';

/**
 * A `@Locked()` method could not get its lock (`onLocked: 'throw'` at once, `'wait'` after
 * `waitMs`). An HttpException for 423 Locked — or 429 Too Many Requests when the method's
 * `limit` holders had the key — with an RFC 9457 problem body; the LockExceptionFilter that
 * LockModule registers adds its `headers` (Retry-After, Content-Type:
 * application/problem+json). `cause` is core's LockTimeoutError.
 */
export class LockedException extends HttpException {
  /** The lock key that was held. */
  readonly key: string;
  /** Headers of the HTTP answer: Retry-After (when the holder's lease end is known) and Content-Type. */
  readonly headers: Readonly<Record<string, string>>;

  /**
   * `retryAfterSeconds` caps the answer's Retry-After (see `@Locked({ retryAfterSeconds })`);
   * without it, Retry-After is the time until the holder's lease ends.
   */
  constructor(cause: LockTimeoutError, now: number = Date.now(), retryAfterSeconds?: number) {
    // lockErrorToHttp answers every LockTimeoutError.
    const answer = lockErrorToHttp(
      cause,
      now,
      retryAfterSeconds === undefined ? {} : { lockedRetryAfterSeconds: retryAfterSeconds },
    )!;
    super(answer.body, answer.status, { cause });
    this.name = 'LockedException';
    // Logs should say who holds the lock; the HTTP body never does.
    this.message = cause.message;
    this.key = cause.key;
    this.headers = answer.headers;
  }
}
