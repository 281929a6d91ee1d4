import type { VersionedRecord } from '../../contract/lock-record.js';
import type { LockStore } from '../../contract/lock-store.js';
import type { ResolvedClock } from '../../shared/clock.js';
import type { RetryPolicy } from '../../shared/retry.js';
import type { KnownRecords } from './known-records.js';

/** What the operations of the compare-and-swap protocol share: the store, the client's clock, retries and owner, and the records seen. */
export interface CasParts {
  readonly store: LockStore;
  readonly clock: ResolvedClock;
  readonly retry: RetryPolicy;
  /** The owner id written into every lease this client takes. */
  readonly owner: string;
  readonly known: KnownRecords;
  /** Reads the record (with retries), remembering what it saw. */
  read(key: string, signal?: AbortSignal): Promise<VersionedRecord | null>;
}
