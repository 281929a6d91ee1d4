export type { Campaign, CampaignOptions } from './campaign.js';
export type { ClockMode, ClockOptions, TimeSource } from './clock.js';
export {
  type HolderSummary,
  LockConfigError,
  LockCorruptedError,
  LockError,
  LockLostError,
  LockNotHeldError,
  LockStoreError,
  type LockStoreErrorReason,
  LockTimeoutError,
} from './errors.js';
export { keyOfHandle } from './handle.js';
export {
  type LockHttpAnswer,
  type LockStoreLogEntry,
  lockErrorToHttp,
  lockStoreLogEntry,
  type ProblemDetails,
} from './http-problem.js';
export { escapeKeyPart } from './key-part.js';
export type { LeaseStrategy } from './lease-engine.js';
export { Lock } from './lock.js';
export { type AcquireOptions, LockClient, type LockClientOptions, type LockInfo } from './lock-client.js';
export type { LockEvent, LockEventListener } from './lock-events.js';
export { checkOptionKeys } from './option-keys.js';
export type { LeaseHolder, LockRecord, VersionedRecord } from './record.js';
export type { RetryOptions } from './retry.js';
export type { ScheduledTimer, Scheduler } from './scheduler.js';
export type { ClaimOutcome, ClaimRequest, LockStore, WriteCondition, WriteOutcome } from './store.js';
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
