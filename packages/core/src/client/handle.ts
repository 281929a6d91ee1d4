import { LockConfigError } from '../shared/errors.js';

/**
 * A handle names one acquisition (key + lockId) so that another process can release or
 * resume it: the acquire-in-one-job, release-in-another pattern of CI pipelines.
 * It is an identifier, not a secret: anyone who can write the store can free a lock anyway.
 */
export interface HandleFields {
  key: string;
  lockId: string;
  owner: string;
  fencingToken: number;
  /** Read after the lock was passed on inside its process: it names an acquisition that ended. */
  passedOn?: boolean;
}

const PREFIX = 'latch1.';
/**
 * A handle read after its lock was passed on inside its process: it names an acquisition that
 * ended, yet the record may still show its lock id. Its own prefix makes older versions of
 * Latch refuse it as not a handle, instead of acting on the lock it was passed to.
 */
const PASSED_ON_PREFIX = 'latch1p.';

export function encodeHandle(fields: HandleFields): string {
  const json = JSON.stringify({ k: fields.key, l: fields.lockId, o: fields.owner, t: fields.fencingToken });
  return (fields.passedOn ? PASSED_ON_PREFIX : PREFIX) + Buffer.from(json, 'utf8').toString('base64url');
}

export function decodeHandle(handle: unknown): HandleFields {
  const passedOn = typeof handle === 'string' && handle.startsWith(PASSED_ON_PREFIX);
  if (typeof handle !== 'string' || !(passedOn || handle.startsWith(PREFIX))) {
    throw new LockConfigError(
      'Not a lock handle: expected the string from lock.handle (it starts with "latch1.").',
    );
  }
  try {
    const body = handle.slice((passedOn ? PASSED_ON_PREFIX : PREFIX).length);
    const raw = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    if (
      typeof raw.k === 'string' &&
      typeof raw.l === 'string' &&
      typeof raw.o === 'string' &&
      Number.isSafeInteger(raw.t)
    ) {
      const fields: HandleFields = { key: raw.k, lockId: raw.l, owner: raw.o, fencingToken: raw.t };
      if (passedOn) fields.passedOn = true;
      return fields;
    }
  } catch {
    // fall through to the error below
  }
  throw new LockConfigError(
    'Malformed lock handle: it was truncated or altered; pass lock.handle unchanged.',
  );
}

/** The lock key a handle belongs to, for releasing by handle alone. Throws LockConfigError for anything but a handle. */
export function keyOfHandle(handle: string): string {
  return decodeHandle(handle).key;
}

/**
 * The fencing token of the acquisition a handle names, for telling a handle released already
 * from one whose lock moved on. Throws LockConfigError for anything but a handle.
 */
export function fencingTokenOfHandle(handle: string): number {
  return decodeHandle(handle).fencingToken;
}
