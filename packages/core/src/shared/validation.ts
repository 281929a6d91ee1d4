import { LockConfigError } from './errors.js';

/** Checks that do not depend on the store: run before anything is sent. */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function checkKeyShape(key: unknown): asserts key is string {
  if (typeof key !== 'string') {
    throw new LockConfigError(`Lock key must be a string, got ${describe(key)}.`);
  }
  if (key.length === 0) throw new LockConfigError('Lock key must not be empty.');
  if (LONE_SURROGATE.test(key)) {
    throw new LockConfigError(
      `Lock key ${JSON.stringify(key.slice(0, 40))} contains a lone UTF-16 surrogate, which has no UTF-8 form; build keys from well-formed strings.`,
    );
  }
}

/** A key prefix to list under: a string ('' or undefined: every key), refused as a key would be otherwise. */
export function checkKeyPrefix(where: string, prefix: unknown): string {
  if (prefix === undefined) return '';
  if (typeof prefix !== 'string') {
    throw new LockConfigError(
      `${where} prefix must be a string of the keys' first characters, got ${describe(prefix)}.`,
    );
  }
  if (LONE_SURROGATE.test(prefix)) {
    throw new LockConfigError(
      `${where} prefix ${JSON.stringify(prefix.slice(0, 40))} contains a lone UTF-16 surrogate, which has no UTF-8 form, so no key starts with it.`,
    );
  }
  return prefix;
}

export function checkKeyBytes(key: string, maxBytes: number, where: string): void {
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > maxBytes) {
    throw new LockConfigError(
      `Lock key is ${bytes} bytes in UTF-8; ${where} allows at most ${maxBytes}. Use a shorter key (hash long identifiers).`,
    );
  }
}

/**
 * The shortest lease accepted, in ms. A lease renews every third of itself against a store a
 * network away, and the simulator checks leases from 1 s up; a shorter one is most likely
 * seconds written where milliseconds were meant (`leaseMs: 30`).
 */
export const MIN_LEASE_MS = 1000;

/** A duration in ms: finite and > 0, or Infinity when `allowInfinity`. */
export function checkDuration(name: string, value: unknown, opts: { allowInfinity?: boolean } = {}): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new LockConfigError(`${name} must be a number of milliseconds, got ${describe(value)}.`);
  }
  if (value === Number.POSITIVE_INFINITY && opts.allowInfinity) return value;
  if (!Number.isFinite(value) || value <= 0) {
    const allowed = opts.allowInfinity
      ? 'a positive number of milliseconds or Infinity'
      : 'a positive, finite number of milliseconds';
    throw new LockConfigError(`${name} must be ${allowed}, got ${describe(value)}.`);
  }
  return value;
}

/** A lease length in ms (`leaseMs`, `extend(ms)`): at least MIN_LEASE_MS, or Infinity (fail-closed). */
export function checkLease(name: string, value: unknown): number {
  const leaseMs = checkDuration(name, value, { allowInfinity: true });
  if (leaseMs < MIN_LEASE_MS) {
    const meant = leaseMs * 1000;
    const fix = name === 'leaseMs' ? `leaseMs: ${meant}` : `${meant}`;
    throw new LockConfigError(
      `${name} must be at least ${MIN_LEASE_MS} milliseconds, got ${leaseMs}. It is in milliseconds: for a lease of ${leaseMs} seconds, pass ${fix}.`,
    );
  }
  return leaseMs;
}

/** A wait in ms: 0 (one try), a positive number, or Infinity. */
export function checkWait(name: string, value: unknown): number {
  if (value === 0) return 0;
  return checkDuration(name, value, { allowInfinity: true });
}

export function checkSignal(name: string, value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) {
    throw new LockConfigError(`${name} must be an AbortSignal, got ${describe(value)}.`);
  }
  return value;
}

export function checkContext(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new LockConfigError(`context must be a string, got ${describe(value)}.`);
  if (value.length > 1024) throw new LockConfigError('context must be at most 1024 characters.');
  if (LONE_SURROGATE.test(value)) throw new LockConfigError('context contains a lone UTF-16 surrogate.');
  return value;
}

/**
 * Lock data must survive a JSON round trip unchanged: anything JSON would drop or alter
 * (undefined, functions, BigInt, NaN, Dates, class instances, cycles) is refused, so that
 * nothing a user stored is lost silently.
 */
export function checkJsonData(value: unknown): void {
  const seen = new Set<object>();
  const visit = (v: unknown, path: string): void => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') {
      if (typeof v === 'string' && LONE_SURROGATE.test(v)) {
        throw new LockConfigError(`Lock data at ${path} contains a lone UTF-16 surrogate.`);
      }
      return;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v))
        throw new LockConfigError(`Lock data at ${path} is ${v}, which JSON cannot store.`);
      return;
    }
    if (typeof v !== 'object') {
      throw new LockConfigError(
        `Lock data at ${path} is a ${typeof v}, which JSON cannot store; use plain JSON values.`,
      );
    }
    if (seen.has(v))
      throw new LockConfigError(
        `Lock data at ${path} refers back to itself (a cycle); JSON cannot store it.`,
      );
    seen.add(v);
    if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) visit(item, `${path}[${i}]`);
    } else {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        throw new LockConfigError(
          `Lock data at ${path} is a ${v.constructor?.name ?? 'class instance'}; store plain objects, arrays, strings, numbers, booleans and null.`,
        );
      }
      for (const [k, item] of Object.entries(v)) visit(item, `${path}.${k}`);
    }
    seen.delete(v);
  };
  visit(value, 'data');
}

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (value === null) return 'null';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}

// A record is read on every poll; anything near the upper bound is a misuse of lock data.
const LARGEST_MAX_RECORD_BYTES = 16 * 1024 * 1024;
// An empty record (no holder, no data) already takes about a hundred bytes.
const SMALLEST_MAX_RECORD_BYTES = 1024;

/** Checks a store's `maxRecordBytes` option; `store` names the factory in the message. */
export function checkMaxRecordBytes(store: string, value: unknown): number {
  if (
    typeof value !== 'number' ||
    !Number.isSafeInteger(value) ||
    value < SMALLEST_MAX_RECORD_BYTES ||
    value > LARGEST_MAX_RECORD_BYTES
  ) {
    throw new LockConfigError(
      `${store} \`maxRecordBytes\` must be an integer from ${SMALLEST_MAX_RECORD_BYTES} to ${LARGEST_MAX_RECORD_BYTES}, got ${describe(value)}.`,
    );
  }
  return value;
}
