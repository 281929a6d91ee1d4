import { checkOptionKeys, LockConfigError } from '@latch/core';
import { describeValue } from './describe-value.js';

/**
 * What a `@Locked()` method does when another holder has the lock:
 * - `'wait'`: wait up to `waitMs`, then reject with a LockedException;
 * - `'skip'`: return `undefined` at once without running (for `@Cron()` jobs every replica fires);
 * - `'throw'`: reject at once with a LockedException (HTTP 423 Locked with Retry-After, or
 *   429 Too Many Requests when `limit` holders have the key).
 */
export type OnLocked = 'wait' | 'skip' | 'throw';

/** Settings a `LockModule` gives every `@Locked()` method that uses its client; each method may override them. */
export interface LockedDefaults {
  /** Default `'wait'`. */
  onLocked?: OnLocked;
  /** How long `'wait'` waits, in ms (default: until acquired, as `LockClient.acquire`). */
  waitMs?: number;
  /** Lease length, in ms (default: the client's `leaseMs`). */
  leaseMs?: number;
  /** Keep the lock at least this long after acquiring, even when the method returns sooner. */
  lockAtLeastMs?: number;
  /**
   * When the first try fails because the store does, fail the call with that error at once
   * instead of retrying while waiting (default true: a route answers 503 or 500 and the filter
   * logs it). Set false for jobs that should ride out a short outage within `waitMs`.
   */
  failFastOnStoreError?: boolean;
  /**
   * What Retry-After says when the lock is held and the call answers 423 Locked, in whole
   * seconds (default 1): on a route the holder is another request, which usually ends long
   * before its lease would. Never more than the holder's lease has left.
   */
  retryAfterSeconds?: number;
}

/** Options of `@Locked(key, options)`. */
export interface LockedOptions extends LockedDefaults {
  /** Which `LockModule.forRoot({ name })` client to use (default: the one registered without a name). */
  client?: string;
  /** Who and why, shown to waiters and by `inspect` (default: `"ClassName.method"`). */
  context?: string;
  /**
   * How many calls may hold the key at once, across every replica (default 1: one at a time).
   * An integer from 1 to 100, checked by the client at bootstrap (a store without
   * compare-and-swap, `s3ListStore`, keeps only 1). Every method and replica that locks the same
   * key must give the same limit; a call that meets holders of another limit fails with core's
   * LockLimitMismatchError (HTTP 500, logged). Per method only: a limit belongs to the keys a
   * method locks, not to a client.
   */
  limit?: number;
}

const ON_LOCKED: readonly OnLocked[] = ['wait', 'skip', 'throw'];
/** Every key of LockedDefaults and LockedOptions: the compiler fails here when one is added but not listed. */
const DEFAULT_OPTIONS: Record<keyof LockedDefaults, true> = {
  onLocked: true,
  waitMs: true,
  leaseMs: true,
  lockAtLeastMs: true,
  failFastOnStoreError: true,
  retryAfterSeconds: true,
};
const LOCKED_OPTIONS: Record<keyof LockedOptions, true> = {
  ...DEFAULT_OPTIONS,
  client: true,
  context: true,
  limit: true,
};
const DEFAULT_KEYS = Object.keys(DEFAULT_OPTIONS);
/** Method options that make no sense for every method of a client, with where they go instead. */
const DEFAULTS_HINTS: Readonly<Record<string, string>> = {
  limit: 'a limit belongs to the keys one method locks, so it is given per method: @Locked(key, { limit }).',
};
const OPTION_KEYS = Object.keys(LOCKED_OPTIONS);

/**
 * Checks `@Locked()` options when the decorator is applied, so mistakes fail at startup. What
 * the calls pass on to core (`limit`, …) is checked by their client too, at bootstrap, where the
 * client is known (see LockExplorer).
 */
export function checkLockedOptions(options: unknown, where: string): LockedOptions {
  const label = `@Locked() on ${where}`;
  const checked = checkShape(options, OPTION_KEYS, label) as LockedOptions;
  checkDefaults(checked, label);
  if (checked.client !== undefined && (typeof checked.client !== 'string' || checked.client.length === 0)) {
    throw new LockConfigError(
      `${label}: client must be the name given to LockModule.forRoot({ name }), got ${describeValue(checked.client)}.`,
    );
  }
  if (
    checked.context !== undefined &&
    (typeof checked.context !== 'string' || checked.context.length > 1024)
  ) {
    throw new LockConfigError(
      `${label}: context must be a string of at most 1024 characters, got ${describeValue(checked.context)}.`,
    );
  }
  return checked;
}

/** Checks the `defaults` given to `LockModule.forRoot()`. */
export function checkLockedDefaults(defaults: unknown, label: string): LockedDefaults {
  const checked = checkShape(defaults, DEFAULT_KEYS, `${label} defaults`, DEFAULTS_HINTS) as LockedDefaults;
  checkDefaults(checked, `${label} defaults`);
  return checked;
}

function checkShape(
  value: unknown,
  known: readonly string[],
  label: string,
  hints: Readonly<Record<string, string>> = {},
): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LockConfigError(`${label}: options must be an object, got ${describeValue(value)}.`);
  }
  checkOptionKeys(label, value, known, hints);
  return value as Record<string, unknown>;
}

function checkDefaults(options: LockedDefaults, label: string): void {
  if (options.onLocked !== undefined && !ON_LOCKED.includes(options.onLocked)) {
    throw new LockConfigError(
      `${label}: onLocked must be 'wait', 'skip' or 'throw', got ${describeValue(options.onLocked)}.`,
    );
  }
  if (options.waitMs !== undefined) {
    if (typeof options.waitMs !== 'number' || Number.isNaN(options.waitMs) || options.waitMs < 0) {
      throw new LockConfigError(
        `${label}: waitMs must be a number of milliseconds >= 0 (or Infinity), got ${describeValue(options.waitMs)}.`,
      );
    }
    if (options.onLocked === 'skip' || options.onLocked === 'throw') {
      throw new LockConfigError(
        `${label}: waitMs applies only to onLocked: 'wait'; '${options.onLocked}' never waits. Remove waitMs, or use onLocked: 'wait'.`,
      );
    }
  }
  if (options.leaseMs !== undefined && !isDuration(options.leaseMs, true)) {
    throw new LockConfigError(
      `${label}: leaseMs must be a number of milliseconds > 0 (or Infinity for a lock that never expires), got ${describeValue(options.leaseMs)}.`,
    );
  }
  if (options.failFastOnStoreError !== undefined && typeof options.failFastOnStoreError !== 'boolean') {
    throw new LockConfigError(
      `${label}: failFastOnStoreError must be true or false, got ${describeValue(options.failFastOnStoreError)}.`,
    );
  }
  const { retryAfterSeconds } = options;
  if (
    retryAfterSeconds !== undefined &&
    !(typeof retryAfterSeconds === 'number' && Number.isInteger(retryAfterSeconds) && retryAfterSeconds >= 1)
  ) {
    throw new LockConfigError(
      `${label}: retryAfterSeconds must be a whole number of seconds, at least 1, got ${describeValue(retryAfterSeconds)}.`,
    );
  }
  if (options.lockAtLeastMs !== undefined && !isDuration(options.lockAtLeastMs, false)) {
    throw new LockConfigError(
      `${label}: lockAtLeastMs must be a finite number of milliseconds > 0, got ${describeValue(options.lockAtLeastMs)}.`,
    );
  }
}

function isDuration(value: unknown, allowInfinity: boolean): boolean {
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0) return false;
  return allowInfinity || Number.isFinite(value);
}

/** The options a call acts on: the method's own, then its client's defaults. */
export interface ResolvedLockedOptions {
  onLocked: OnLocked;
  waitMs: number | undefined;
  leaseMs: number | undefined;
  lockAtLeastMs: number | undefined;
  failFastOnStoreError: boolean;
  limit: number | undefined;
  retryAfterSeconds: number;
}

/** A lock held by another request is usually free again within a second. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

export function resolveLockedOptions(own: LockedOptions, defaults: LockedDefaults): ResolvedLockedOptions {
  // A method that names waitMs asks to wait, whatever the module's default onLocked.
  const onLocked = own.onLocked ?? (own.waitMs !== undefined ? 'wait' : (defaults.onLocked ?? 'wait'));
  return {
    onLocked,
    waitMs: onLocked === 'wait' ? (own.waitMs ?? defaults.waitMs) : 0,
    leaseMs: own.leaseMs ?? defaults.leaseMs,
    lockAtLeastMs: own.lockAtLeastMs ?? defaults.lockAtLeastMs,
    failFastOnStoreError: own.failFastOnStoreError ?? defaults.failFastOnStoreError ?? true,
    limit: own.limit,
    retryAfterSeconds: own.retryAfterSeconds ?? defaults.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS,
  };
}
