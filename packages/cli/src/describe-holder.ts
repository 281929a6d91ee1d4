import type { HolderSummary } from '@latch/core';

/** "deploy #42 (host-a:123:x7), since 2026-01-05T12:01:03Z, lease ends 2026-01-05T12:16:03Z" */
export function describeHolder(holder: HolderSummary): string {
  const who = holder.context ? `${holder.context} (${holder.owner})` : holder.owner;
  const until = holder.expiresAt === null ? 'no expiry' : `lease ends ${isoTime(holder.expiresAt)}`;
  return `${who}, since ${isoTime(holder.acquiredAt)}, ${until}`;
}

/** Seconds-precision UTC time, the way CI logs print it. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
