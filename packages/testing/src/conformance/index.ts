// `@latch/testing/conformance`: the suites a lock store runs to prove it keeps Latch's
// contract, under vitest (an optional peer dependency). They take the `@latch/core` module as
// a parameter, so this package does not depend on core and the store is tested with yours.
export type { ConformanceBackend, Limitations } from './backend.js';
export { type BreakableWrites, breakableWrites } from './breakable-writes.js';
export type {
  AcquireOptionsLike,
  CampaignLike,
  ClientOptionsLike,
  ClockOption,
  ErrorClass,
  LatchErrors,
  LatchModule,
  LockClientLike,
  LockHolderInfoLike,
  LockInfoLike,
  LockLike,
  LockSetLike,
  TryAcquireOptionsLike,
} from './latch-module.js';
export { describeLockConformance, type LockConformanceOptions } from './lock-conformance.js';
export { freeRecord, heldRecord } from './records.js';
export { describeStoreContract, type StoreContractOptions } from './store-contract.js';
export type {
  ClaimOutcomeShape,
  ClaimRequestShape,
  LeaseHolderShape,
  ListedKeyShape,
  ListPageShape,
  LockRecordShape,
  StoreUnderContract,
  VersionedRecordShape,
  WriteConditionShape,
  WriteOutcomeShape,
} from './store-shapes.js';
export type { StoreUnderTest } from './store-under-test.js';
