import { LockConfigError } from './errors.js';

/**
 * Makes a value from untrusted input (a route parameter, a job field) safe to put inside a
 * lock key: every character outside [A-Za-z0-9_-] is percent-encoded from its UTF-8 bytes,
 * `%` and `.` included. The result has no `/`, no `.`, no separator of any kind, and the
 * encoding is one-to-one, so two different values never share a lock and no value can reach
 * a key outside the place the template gives it.
 */
export function escapeKeyPart(value: string): string {
  if (typeof value !== 'string') {
    throw new LockConfigError(`A lock key part must be a string, got ${typeof value}.`);
  }
  let escaped: string;
  try {
    escaped = encodeURIComponent(value);
  } catch {
    // encodeURIComponent throws on lone UTF-16 surrogates, which have no UTF-8 form.
    throw new LockConfigError(
      'A lock key part contains a lone UTF-16 surrogate, which cannot be stored; send well-formed text.',
    );
  }
  // encodeURIComponent leaves . ! ~ * ' ( ) as they are; encode those too.
  return escaped.replace(/[.!~*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
