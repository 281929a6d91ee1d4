import {
  LockConfigError,
  LockLimitMismatchError,
  LockLostError,
  LockStoreError,
  LockTimeoutError,
} from '@latch/core';
import { type LockHttpAnswer, lockErrorToHttp, lockStoreLogEntry } from '@latch/core/http';
import { type ArgumentsHost, Catch, type ExceptionFilter, Inject, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { LockedException } from './locked.exception.js';

/**
 * Answers HTTP requests that failed on a lock the way every Latch web adapter does: 423 Locked
 * with Retry-After (LockedException, LockTimeoutError; 429 Too Many Requests when a `limit`
 * was reached), 409 (LockLostError), 400 (LockConfigError, e.g. a key built from a bad
 * request), 500 (LockLimitMismatchError: holders of the key use another `limit`), and for a
 * LockStoreError 503 with Retry-After (an outage) or 500 (a store set up wrong) — each with an
 * RFC 9457 application/problem+json body. Nest's default filter cannot send headers, hence this
 * filter; LockModule registers it globally.
 *
 * The answer never carries a store failure's cause, so the filter logs it through Nest's
 * `Logger` (context 'Latch'): `error` for a store set up wrong (missing bucket or table, no or
 * rejected credentials, access denied), `warn` for an outage or throttling. A limit mismatch
 * (methods or replicas that lock one key with different limits) is logged at `error`, once per
 * key and pair of limits: every call meeting it fails the same way.
 */
@Catch(LockedException, LockTimeoutError, LockLostError, LockConfigError, LockStoreError)
export class LockExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Latch');
  /** The limit mismatches logged so far, as [key, held, asked]; bounded, the oldest forgotten first. */
  private readonly loggedMismatches = new Set<string>();

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
    if (exception instanceof LockLimitMismatchError)
      this.logLimitMismatch(exception, host, headersSent ? undefined : answer.status);
    if (headersSent) {
      httpAdapter.end(response);
      return;
    }
    for (const [name, value] of Object.entries(answer.headers)) httpAdapter.setHeader(response, name, value);
    // The body goes as JSON text: given an object, Nest 11's ExpressAdapter takes any error answer
    // whose Content-Type does not start with application/json for a mistake, logs a warning and
    // sends it as application/json. Text is sent as it is, with the type set above, on every
    // platform and major.
    httpAdapter.reply(response, JSON.stringify(answer.body), answer.status);
  }

  /** One line, e.g. `POST /jobs/7/run answered 500: lock store misconfigured (reason misconfigured, …): …`. */
  private logStoreError(error: LockStoreError, host: ArgumentsHost, status: number | undefined): void {
    const entry = lockStoreLogEntry(error);
    const line = `${describeRequest(this.adapterHost, host, status)}: ${entry.message}`;
    if (entry.level === 'error') this.logger.error(line);
    else this.logger.warn(line);
  }

  /**
   * One line per key and pair of limits, e.g. `GET /reports/acme answered 500: lock limit
   * mismatch: Lock "report:acme" is held with limit 3, and this call asked for limit 5. …`.
   */
  private logLimitMismatch(
    error: LockLimitMismatchError,
    host: ArgumentsHost,
    status: number | undefined,
  ): void {
    const mismatch = JSON.stringify([error.key, error.heldLimit, error.askedLimit]);
    if (this.loggedMismatches.has(mismatch)) return;
    if (this.loggedMismatches.size >= MAX_MISMATCHES) {
      this.loggedMismatches.delete(this.loggedMismatches.values().next().value as string);
    }
    this.loggedMismatches.add(mismatch);
    this.logger.error(
      `${describeRequest(this.adapterHost, host, status)}: lock limit mismatch: ${error.message}`,
    );
  }
}

/** Distinct limit mismatches remembered; past this the oldest is forgotten (and may be logged again). */
const MAX_MISMATCHES = 100;

/** `POST /jobs/7/run answered 500`, or `… failed after its response started`. */
function describeRequest(
  adapterHost: HttpAdapterHost,
  host: ArgumentsHost,
  status: number | undefined,
): string {
  const { httpAdapter } = adapterHost;
  const request = host.switchToHttp().getRequest<unknown>();
  // The query string is left out: it may carry tokens.
  const path = String(httpAdapter.getRequestUrl(request) ?? '').split('?')[0];
  const outcome = status === undefined ? 'failed after its response started' : `answered ${status}`;
  return `${httpAdapter.getRequestMethod(request)} ${path} ${outcome}`;
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
