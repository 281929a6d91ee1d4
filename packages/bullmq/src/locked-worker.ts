import { LockConfigError } from '@latch/core';
import { Worker, type WorkerOptions } from 'bullmq';
import { checkJobLockOptionKeys, type JobLockOptions } from './options.js';
import { type LockedProcessor, withLock } from './with-lock.js';

export interface LockedWorkerOptions<
  DataType = unknown,
  ResultType = unknown,
  NameType extends string = string,
> extends WorkerOptions {
  /** Options of `withLock`; `leaseMs` defaults to the worker's `lockDuration` (BullMQ's default: 30 s). */
  lock: JobLockOptions<DataType, ResultType, NameType>;
}

/** A BullMQ Worker whose processor runs under `withLock`, with the lock lease matched to `lockDuration`. */
export class LockedWorker<
  DataType = unknown,
  ResultType = unknown,
  NameType extends string = string,
> extends Worker<DataType, ResultType, NameType> {
  constructor(
    name: string,
    processor: LockedProcessor<DataType, ResultType, NameType>,
    options: LockedWorkerOptions<DataType, ResultType, NameType>,
  ) {
    if (typeof options?.lock !== 'object' || options.lock === null) {
      throw new LockConfigError(
        'new LockedWorker(name, processor, options) needs options.lock: { client, key } (the options of withLock), next to the usual worker options.',
      );
    }
    checkJobLockOptionKeys('new LockedWorker(name, processor, { lock })', options.lock);
    const { lock, ...workerOptions } = options;
    const leaseMs = lock.leaseMs ?? workerOptions.lockDuration ?? 30_000;
    super(name, withLock(processor, { ...lock, leaseMs }), workerOptions);
  }
}
