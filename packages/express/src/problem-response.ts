import { type LockHttpAnswer, lockErrorToHttp } from '@latch/core';
import type { ErrorRequestHandler, Response } from 'express';

/** Sends one of core's HTTP answers: status, headers (Retry-After, problem+json) and body. */
export function sendProblem(res: Response, answer: LockHttpAnswer): void {
  res.status(answer.status).set(answer.headers).json(answer.body);
}

/**
 * Error middleware that answers Latch errors the standard way — a store failure is 503 with
 * Retry-After, a lock lost mid-request 409, a held lock 423, a bad key 400 — each with an
 * RFC 9457 problem+json body, and passes every other error on.
 */
export function lockErrorHandler(): ErrorRequestHandler {
  return (error, _req, res, next) => {
    const answer = lockErrorToHttp(error);
    if (!answer || res.headersSent) {
      next(error);
      return;
    }
    sendProblem(res, answer);
  };
}
