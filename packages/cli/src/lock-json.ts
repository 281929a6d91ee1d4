import type { LockInfo } from '@latch/core';

/** Owner, context and times of one holder. */
export type HolderTimes = Pick<LockInfo, 'owner' | 'context' | 'acquiredAt' | 'expiresAt'>;

/**
 * A lock as `status --json` and `ls --json` print it: key, state and token; holder fields only
 * when held; "limit" and "holders" for a lock taken with a limit above 1. Times in ISO 8601.
 */
export function lockJson(info: LockInfo): Record<string, unknown> {
  const json: Record<string, unknown> = { key: info.key, state: info.state, fencingToken: info.fencingToken };
  if (info.state === 'free') return json;
  Object.assign(json, holderJson(info));
  if (info.limit > 1) {
    json.limit = info.limit;
    json.holders = info.holders.map((holder) => ({
      ...holderJson(holder),
      state: holder.state,
      fencingToken: holder.fencingToken,
    }));
  }
  return json;
}

function holderJson(holder: HolderTimes): Record<string, unknown> {
  const json: Record<string, unknown> = { owner: holder.owner };
  if (holder.context !== undefined) json.context = holder.context;
  if (holder.acquiredAt !== undefined) json.acquiredAt = new Date(holder.acquiredAt).toISOString();
  if (holder.expiresAt !== undefined)
    json.expiresAt = holder.expiresAt === null ? null : new Date(holder.expiresAt).toISOString();
  return json;
}
