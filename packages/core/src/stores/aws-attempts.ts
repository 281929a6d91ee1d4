// Which attempts of one SDK call may have reached the service. The SDK retries a refused
// connection on its own and throws only the last attempt's error, so that error alone cannot
// tell "every attempt failed before sending" from "an earlier attempt timed out after sending".

import { attemptsOf, failedBeforeSending } from './aws-error-kind.js';

interface AttemptLog {
  /** One entry per attempt, in order: true when that attempt may have reached the service. */
  sent: boolean[];
  /** The error the last failed attempt threw. */
  last: unknown;
}

/** The log of the call each error ended, by the error object the SDK throws. */
const logs = new WeakMap<object, AttemptLog>();

type Handler = (args: unknown) => Promise<unknown>;
interface CommandWithStack {
  middlewareStack?: {
    add?: (middleware: (next: Handler) => Handler, options: Record<string, unknown>) => void;
  };
}

/**
 * Records every attempt the SDK makes for this command. The recorder sits inside the SDK's retry
 * loop (finalizeRequest step, after retries and signing) and outside deserialization, so it sees
 * each attempt's transport error or service error. A command without a middleware stack (a
 * hand-made client) is left alone: its errors are judged by the SDK's attempt count.
 */
export function trackAttempts<C>(command: C): C {
  const stack = (command as CommandWithStack).middlewareStack;
  if (typeof stack?.add !== 'function') return command;
  const log: AttemptLog = { sent: [], last: undefined };
  stack.add(
    (next) => async (args) => {
      try {
        const output = await next(args);
        log.sent.push(true);
        return output;
      } catch (error) {
        log.sent.push(!failedBeforeSending(error));
        log.last = error;
        if (typeof error === 'object' && error !== null) logs.set(error, log);
        throw error;
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'latchAttemptLog' },
  );
  return command;
}

/**
 * True when an attempt before the one that threw `error` may have reached the service: the
 * call's outcome then depends on that attempt, whatever the last one said. Without a log that
 * ends in this very error, any retry counts as possibly applied.
 */
export function earlierAttemptMayHaveLanded(error: unknown): boolean {
  const log = typeof error === 'object' && error !== null ? logs.get(error) : undefined;
  if (log === undefined || log.last !== error || log.sent.length < attemptsOf(error)) {
    return attemptsOf(error) > 1;
  }
  return log.sent.slice(0, -1).some(Boolean);
}
