import { LockConfigError, LockLostError, LockStoreError, LockTimeoutError } from '@latch/core';
import { type LockHttpAnswer, lockErrorToHttp, lockStoreLogEntry } from '@latch/core/http';
import { type ArgumentsHost, Catch, type ExceptionFilter, Inject, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { LockedException } from './locked.exception.js';

/**
 * Answers HTTP requests that failed on a lock the way every Latch web adapter does: 423 Locked
 * with Retry-After (LockedException, LockTimeoutError), 409 (LockLostError), 400
 * (LockConfigError, e.g. a key built from a bad request), and for a LockStoreError 503 with
 * Retry-After (an outage) or 500 (a store set up wrong) — each with an RFC 9457
 * application/problem+json body. Nest's default filter cannot send headers, hence this filter;
 * LockModule registers it globally.
 *
 * The answer never carries a store failure's cause, so the filter logs it through Nest's
 * `Logger` (context 'Latch'): `error` for a store set up wrong (missing bucket or table, no or
 * rejected credentials, access denied), `warn` for an outage or throttling.
 */
@Catch(LockedException, LockTimeoutError, LockLostError, LockConfigError, LockStoreError)
export class LockExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Latch');

  constructor(@Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    // Microservice and WebSocket handlers answer errors their own way.
    if (host.getType() !== 'http') throw exception;
    const answer = answerFor(exception);
    if (!answer) throw exception;
    const { httpAdapter } = this.adapterHost;
    const response = host.switchToHttp().getResponse<unknown>();
    const headersSent = httpAdapter.isHeadersSent(response);
    if (exception instanceof LockStoreError)
      this.logStoreError(exception, host, headersSent ? undefined : answer.status);
    if (headersSent) {
      httpAdapter.end(response);
      return;
    }
    for (const [name, value] of Object.entries(answer.headers)) httpAdapter.setHeader(response, name, value);
    httpAdapter.reply(response, answer.body, answer.status);
  }

  /** One line, e.g. `POST /jobs/7/run answered 500: lock store misconfigured (reason misconfigured, …): …`. */
  private logStoreError(error: LockStoreError, host: ArgumentsHost, status: number | undefined): void {
    const { httpAdapter } = this.adapterHost;
    const request = host.switchToHttp().getRequest<unknown>();
    // The query string is left out: it may carry tokens.
    const path = String(httpAdapter.getRequestUrl(request) ?? '').split('?')[0];
    const outcome = status === undefined ? 'failed after its response started' : `answered ${status}`;
    const entry = lockStoreLogEntry(error);
    const line = `${httpAdapter.getRequestMethod(request)} ${path} ${outcome}: ${entry.message}`;
    if (entry.level === 'error') this.logger.error(line);
    else this.logger.warn(line);
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
