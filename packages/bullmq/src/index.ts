export { LockedWorker, type LockedWorkerOptions } from './locked-worker.js';
export type { DelayBackoff, JobLockOptions, OnLocked } from './options.js';
export { type JobLockContext, type LockedProcessor, withLock } from './with-lock.js';
