import { inspectLock, Lock, type LockInspection } from '../src/client/lock.js';
import { LockClient } from '../src/client/lock-client.js';
import type { LockClientOptions } from '../src/client/lock-options.js';

/**
 * What the checkers read of a lock: its own state (`inspectLock`) and the store lease under it.
 * Every read goes through a build's `view`, so that a lock of a released build (a mixed-version
 * run) is read through that build's own fields.
 */
export interface LockView extends LockInspection {
  /** The id its lease writes under. */
  readonly lockId: string;
  /** The lease length its lease's record stores for it (0 when unknown). */
  readonly storedLeaseMs: number;
  /** Did its lease send the write with this id? */
  wrote(writeId: string): boolean;
}

/** One build of core a simulated client can run. */
export interface CoreBuild {
  /** 'current' (this checkout) or the released commit's name. */
  readonly name: string;
  makeClient(options: LockClientOptions): LockClient;
  /** Is this lock one of this build's? */
  owns(lock: Lock<unknown>): boolean;
  view(lock: Lock<unknown>): LockView;
}

/** This checkout's core, read through its typed seams. */
export const currentBuild: CoreBuild = {
  name: 'current',
  makeClient: (options) => new LockClient(options),
  owns: (lock) => lock instanceof Lock,
  view: (lock) => {
    const lease = lock.lease;
    return {
      ...inspectLock(lock),
      lockId: lease.lockId,
      storedLeaseMs: lease.record?.holder?.leaseMs ?? 0,
      wrote: (writeId) => lease.wrote(writeId),
    };
  },
};

const builds: CoreBuild[] = [currentBuild];

/** Adds a released build (mixed-version runs); its locks are then read through it. */
export function addBuild(build: CoreBuild): void {
  builds.push(build);
}

/** The build whose lock this is. */
function buildOf(lock: Lock<unknown>): CoreBuild {
  for (const build of builds) if (build.owns(lock)) return build;
  throw new Error(`sim: a lock of no known build of core (key ${lock.key})`);
}

/** Which build of core a lock comes from ('current', or a released build's name). */
export function buildName(lock: Lock<unknown>): string {
  return buildOf(lock).name;
}

/** A lock as the checkers read it, whichever build it comes from. */
export function lockView(lock: Lock<unknown>): LockView {
  return buildOf(lock).view(lock);
}
