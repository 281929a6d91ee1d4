import { escapeKeyPart, LockConfigError } from '@latch/core';

/**
 * Lock names are chosen by the developer, so they may use `/` to build a hierarchy
 * ("billing/invoice"), but only from a small alphabet: no `.`-segments, no `%`, nothing the
 * escaped request part could imitate.
 */
const NAME_SEGMENT = /^[A-Za-z0-9_-]+$/;
const MAX_NAME_LENGTH = 200;

/** Throws a LockConfigError (at setup time) unless `name` is a usable lock namespace. */
export function checkLockName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new LockConfigError(
      `lock({ name }) needs a non-empty string naming the resource the route locks, such as 'invoice'; got ${typeof name === 'string' ? 'an empty string' : typeof name}.`,
    );
  }
  if (name.length > MAX_NAME_LENGTH || !name.split('/').every((segment) => NAME_SEGMENT.test(segment))) {
    throw new LockConfigError(
      `lock({ name: ${JSON.stringify(name.slice(0, 60))} }) must be at most ${MAX_NAME_LENGTH} characters of letters, digits, '_' and '-', in segments separated by single '/' (e.g. 'billing/invoice').`,
    );
  }
}

/**
 * The store key for one request: `<name>/<escaped request part>`.
 *
 * The request part is untrusted: core's escapeKeyPart makes it one opaque segment (no `/`,
 * no `.`, one-to-one), so no input can name a key under another namespace.
 */
export function routeLockKey(name: string, requestPart: unknown): string {
  if (typeof requestPart !== 'string' || requestPart.length === 0) {
    throw new LockConfigError(
      `The lock key for "${name}" comes from the request and must be a non-empty string; got ${describeValue(requestPart)}.`,
    );
  }
  try {
    return `${name}/${escapeKeyPart(requestPart)}`;
  } catch (error) {
    throw new LockConfigError(
      `The lock key for "${name}" comes from the request: ${(error as Error).message}`,
    );
  }
}

function describeValue(value: unknown): string {
  if (value === '') return 'an empty string';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array (was the parameter given more than once?)';
  return typeof value;
}
