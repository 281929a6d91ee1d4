import {
  LockConfigError,
  LockCorruptedError,
  LockLostError,
  LockNotHeldError,
  LockStoreError,
  LockTimeoutError,
} from '@latch/core';
import type { Env } from './aws-settings.js';
import { describeHolder } from './describe-holder.js';
import { describeStoreError } from './describe-store-error.js';
import { formatDuration } from './duration.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import type { StoreUrl } from './store-url.js';
import { UsageError } from './usage-error.js';

/**
 * The message (one line, no stack trace) and exit code for any error a command ends with;
 * the caller prefixes it with the command ("latch run: ..."). `ctx.store` is the store the
 * command opened, if it got that far: store failures are told in terms of its URL.
 */
export function describeFailure(
  error: unknown,
  ctx: { store?: StoreUrl | undefined; env?: Env } = {},
): { message: string; code: ExitCodeValue } {
  if (error instanceof UsageError || error instanceof LockConfigError) {
    return { message: oneLine(error.message), code: ExitCode.usage };
  }
  if (error instanceof LockTimeoutError) {
    const by = error.holder ? describeHolder(error.holder) : undefined;
    const held =
      error.limit === undefined
        ? `lock "${error.key}" is held${by ? ` by ${by}` : ''}`
        : `all ${error.limit} places of lock "${error.key}" (--limit ${error.limit}) are taken${by ? `, one by ${by}` : ''}`;
    const message =
      error.waitedMs === 0 ? held : `gave up after waiting ${formatDuration(error.waitedMs)}: ${held}`;
    return { message, code: ExitCode.notAcquired };
  }
  if (error instanceof LockStoreError) {
    const own = describeStoreError(error, ctx.store, ctx.env ?? {});
    const message = own ?? `${oneLine(error.message)}${hint(error)}`;
    return { message: `store error: ${message}`, code: ExitCode.storeError };
  }
  if (error instanceof LockCorruptedError) {
    return { message: `store error: ${oneLine(error.message)}`, code: ExitCode.storeError };
  }
  if (error instanceof LockLostError || error instanceof LockNotHeldError) {
    return { message: oneLine(error.message), code: ExitCode.lockLost };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { message: `unexpected error: ${oneLine(message)}`, code: ExitCode.failure };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** What to do about the store errors a CLI user meets first, which the SDK words for programmers. */
function hint(error: Error): string {
  const cause = error.cause instanceof Error ? error.cause.message : '';
  if (/region is missing/i.test(cause)) return ' Set AWS_REGION (or use a profile that has a region).';
  return '';
}
