import { LockCorruptedError } from '../../shared/errors.js';

/**
 * The body of a list-strategy object: who is contending and why, for waiters and `inspect`.
 * Order and expiry live in the object's name; the body only describes the contender.
 */
export interface ContenderBody {
  owner: string;
  context?: string | undefined;
  /** The contender's wall clock when it first uploaded (= `created` in the name). */
  acquiredAt: number;
  /** The contender's wall clock when it uploaded this object. */
  renewedAt: number;
  /** Lease length; null for fail-closed locks. */
  leaseMs: number | null;
}

const SCHEMA = 'latch-list/1';

export function encodeContenderBody(body: ContenderBody): string {
  return JSON.stringify({ latch: SCHEMA, ...body });
}

export function decodeContenderBody(key: string, text: string): ContenderBody {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new LockCorruptedError(key, 'a contender object is not valid JSON', { cause: error });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new LockCorruptedError(key, 'a contender object is not a JSON object');
  }
  const { latch, owner, context, acquiredAt, renewedAt, leaseMs } = raw as Record<string, unknown>;
  if (latch !== SCHEMA) {
    throw new LockCorruptedError(key, `a contender object has unknown schema ${JSON.stringify(latch)}`);
  }
  if (typeof owner !== 'string') throw new LockCorruptedError(key, 'a contender object has no owner');
  if (context !== undefined && typeof context !== 'string') {
    throw new LockCorruptedError(key, 'a contender object has a context that is not a string');
  }
  if (!isTime(acquiredAt) || !isTime(renewedAt) || !(leaseMs === null || isTime(leaseMs))) {
    throw new LockCorruptedError(key, 'a contender object has timestamps that are not numbers');
  }
  return { owner, context, acquiredAt, renewedAt, leaseMs };
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
