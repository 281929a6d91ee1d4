import { type Lock, LockClient, type LockClientOptions, type LockStore } from '../../src/index.js';
import { ManualTime } from './manual-time.js';
import { oneRequestClaimStore } from './one-request-claim-store.js';

/** Held for the caller: isHeld and a live signal, read through the public getters. */
export const held = (lock: Lock | undefined) => lock?.isHeld && !lock.signal.aborted;

/**
 * Clients on one manual timeline over a scripted memory store (or, with `oneRequestClaim`, one
 * that also has DynamoDB's one-request claim): a 10 s lease, 200 ms polls, no SDK-like retries,
 * so every scripted fault reaches the protocol.
 */
export function scriptedClients(options: Partial<LockClientOptions> = {}, { oneRequestClaim = false } = {}) {
  const time = new ManualTime();
  const scripted = oneRequestClaimStore(time);
  const faulty = oneRequestClaim ? scripted.store : scripted.withoutClaim;
  const client = (extra: Partial<LockClientOptions> = {}, store: LockStore = faulty) =>
    new LockClient({
      store,
      leaseMs: 10_000,
      retry: { attempts: 1 },
      pollMs: 200,
      clock: { time: time.scheduler() },
      ...options,
      ...extra,
    });
  return { time, scripted, client };
}

/** Another replica on the same records, with no faults on its way. */
export const replica = (
  s: Pick<ReturnType<typeof scriptedClients>, 'client' | 'scripted'>,
  extra: Partial<LockClientOptions> = {},
) => s.client(extra, s.scripted.inner);
