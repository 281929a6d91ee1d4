import type { VersionedRecord } from '../contract/lock-record.js';

/** What `inspect` reports about a key. */
export interface LockInfo<T = unknown> {
  key: string;
  /** 'held' (lease running), 'expired' (holder's lease ran out, not yet taken over), 'free'. */
  state: 'free' | 'held' | 'expired';
  /** Highest fencing token issued so far (0 if never acquired). */
  fencingToken: number;
  owner?: string;
  context?: string;
  acquiredAt?: number;
  expiresAt?: number | null;
  data?: T;
}

/** What `inspect` reports for a record read at wall-clock time `now` (null: the key was never locked). */
export function describeRecord(key: string, current: VersionedRecord | null, now: number): LockInfo {
  if (!current) return { key, state: 'free', fencingToken: 0 };
  const { record } = current;
  const info: LockInfo = { key, state: 'free', fencingToken: record.token };
  if (record.data !== undefined) info.data = record.data;
  const holder = record.holder;
  if (!holder) return info;
  const expired = holder.expiresAt !== null && holder.expiresAt < now;
  info.state = expired ? 'expired' : 'held';
  info.owner = holder.owner;
  if (holder.context !== undefined) info.context = holder.context;
  info.acquiredAt = holder.acquiredAt;
  info.expiresAt = holder.expiresAt;
  return info;
}
