// `@latch/core/store`: the kit for writing a store. A store keeps one record per key and offers
// conditional writes; the lease protocol above it (fencing, expiry, hand-over) is Latch's.
// `@latch/testing/conformance` has the suites a store runs to prove it keeps the contract.
export type { LeaseHolder, LockRecord, SlotHolder, VersionedRecord } from './contract/lock-record.js';
export type {
  ClaimOutcome,
  ClaimRequest,
  ListedKey,
  ListPage,
  LockStore,
  WriteCondition,
  WriteOutcome,
} from './contract/lock-store.js';
export { decodeRecord, encodeRecord } from './contract/record-codec.js';
export {
  LockConfigError,
  LockCorruptedError,
  LockError,
  LockStoreError,
  type LockStoreErrorReason,
} from './shared/errors.js';
