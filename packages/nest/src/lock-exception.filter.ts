import {
  LockConfigError,
  type LockHttpAnswer,
  LockLostError,
  LockStoreError,
  LockTimeoutError,
  lockErrorToHttp,
} from '@latch/core';
import { type ArgumentsHost, Catch, type ExceptionFilter, Inject } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { LockedException } from './locked.exception.js';

/**
 * Answers HTTP requests that failed on a lock the way every Latch web adapter does: 423 Locked
 * with Retry-After (LockedException, LockTimeoutError), 409 (LockLostError), 400
 * (LockConfigError, e.g. a key built from a bad request), 503 with Retry-After
 * (LockStoreError) — each with an RFC 9457 application/problem+json body. Nest's default
 * filter cannot send headers, hence this filter; LockModule registers it globally.
 */
@Catch(LockedException, LockTimeoutError, LockLostError, LockConfigError, LockStoreError)
export class LockExceptionFilter implements ExceptionFilter {
  constructor(@Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    // Microservice and WebSocket handlers answer errors their own way.
    if (host.getType() !== 'http') throw exception;
    const answer = answerFor(exception);
    if (!answer) throw exception;
    const { httpAdapter } = this.adapterHost;
    const response = host.switchToHttp().getResponse<unknown>();
    if (httpAdapter.isHeadersSent(response)) {
      httpAdapter.end(response);
      return;
    }
    for (const [name, value] of Object.entries(answer.headers)) httpAdapter.setHeader(response, name, value);
    httpAdapter.reply(response, answer.body, answer.status);
  }
}

function answerFor(exception: unknown): LockHttpAnswer | undefined {
  if (exception instanceof LockedException) {
    return {
      status: exception.getStatus(),
      headers: { ...exception.headers },
      body: exception.getResponse() as LockHttpAnswer['body'],
    };
  }
  return lockErrorToHttp(exception);
}
