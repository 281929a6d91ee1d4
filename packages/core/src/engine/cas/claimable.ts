import type { VersionedRecord } from '../../contract/lock-record.js';
import type { CasParts } from './cas-parts.js';

// When a waiter may take a held record over: by the holder's stored expiry on trusted clocks, or
// by how long this client has seen the same version unchanged on untrusted ones, and on trusted
// ones too for a holder on untrusted clocks (it stores no expiry: see storedExpiry).

/** Whether a waiter may take this record over now, by the client's clock mode. */
export function isClaimable(parts: CasParts, key: string, current: VersionedRecord | null): boolean {
  const holder = current?.record.holder;
  if (!holder) return true;
  if (holder.leaseMs === null) return false;
  if (parts.clock.mode === 'trusted' && holder.expiresAt !== null) {
    return holder.expiresAt + parts.clock.toleranceMs < parts.clock.time.now();
  }
  const seen = parts.known.get(key);
  if (!seen || seen.current?.version !== current?.version) return false;
  return parts.clock.time.monotonic() - seen.firstSeenAt >= holder.leaseMs + parts.clock.toleranceMs;
}

/** Milliseconds until `current` may become claimable, if this client can tell; undefined otherwise. */
export function msUntilClaimable(
  parts: CasParts,
  key: string,
  current: VersionedRecord | null,
): number | undefined {
  const holder = current?.record.holder;
  if (!holder) return 0;
  if (holder.leaseMs === null) return undefined;
  if (parts.clock.mode === 'trusted' && holder.expiresAt !== null) {
    return Math.max(0, holder.expiresAt + parts.clock.toleranceMs - parts.clock.time.now());
  }
  const seen = parts.known.get(key);
  if (!seen || seen.current?.version !== current?.version) return holder.leaseMs + parts.clock.toleranceMs;
  return Math.max(
    0,
    seen.firstSeenAt + holder.leaseMs + parts.clock.toleranceMs - parts.clock.time.monotonic(),
  );
}
