// The user API: what an application touches to take, hold and release locks. Store authors
// import from `@latch/core/store`, HTTP adapters from `@latch/core/http`.
export type { Campaign, CampaignOptions } from './client/campaign.js';
export { fencingTokenOfHandle, keyOfHandle } from './client/handle.js';
export { Lock, type ReleaseOptions } from './client/lock.js';
export { LockClient } from './client/lock-client.js';
export type { LockHolderInfo, LockInfo } from './client/lock-info.js';
export type {
  AcquireOptions,
  ListOptions,
  LockClientOptions,
  ResumeOptions,
  TryAcquireOptions,
} from './client/lock-options.js';
export { LockSet } from './client/lock-set.js';
export { verifyStore } from './client/verify-store.js';
export type { LockStore } from './contract/lock-store.js';
export type { LeaseStrategy } from './engine/lease-engine.js';
export type { ClockMode, ClockOptions, TimeSource } from './shared/clock.js';
export {
  type HolderSummary,
  LockConfigError,
  LockCorruptedError,
  LockError,
  LockLimitMismatchError,
  type LockLossReason,
  LockLostError,
  LockNotHeldError,
  LockStoreError,
  type LockStoreErrorReason,
  LockTimeoutError,
} from './shared/errors.js';
export { escapeKeyPart } from './shared/key-part.js';
export type { LockEvent, LockEventListener } from './shared/lock-events.js';
export { checkOptionKeys } from './shared/option-keys.js';
export type { RetryOptions } from './shared/retry.js';
export type { ScheduledTimer, Scheduler } from './shared/scheduler.js';
export {
  type DynamoStoreOptions,
  dynamoStore,
  type EnsureLockTableOptions,
  ensureLockTable,
  type S3ListStoreOptions,
  type S3StoreOptions,
  s3ListStore,
  s3Store,
} from './stores/index.js';
export { type MemoryStore, type MemoryStoreOptions, memoryStore } from './stores/memory-store.js';
export type { SpanAttributes } from './telemetry/span-attributes.js';
export type { TelemetryOptions } from './telemetry/telemetry-options.js';
export { LockStoreUnsafeError } from './verify/store-unsafe-error.js';
export {
  type ClockReading,
  describeVerdict,
  type StoreCheck,
  type StoreCheckOutcome,
  type StoreVerdict,
} from './verify/store-verdict.js';
export { VERIFY_KEY_PREFIX, type VerifyStoreOptions } from './verify/verify-store.js';
