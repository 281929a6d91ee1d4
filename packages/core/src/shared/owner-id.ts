import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** Default owner id: readable in `inspect` output, unique per client instance. */
export function defaultOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}
