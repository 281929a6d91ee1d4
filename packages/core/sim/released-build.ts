import { pathToFileURL } from 'node:url';
import type { Lock, LockInspection } from '../src/client/lock.js';
import type { LockClient } from '../src/client/lock-client.js';
import type { LockClientOptions } from '../src/client/lock-options.js';
import type { CoreBuild, LockView } from './core-build.js';

/**
 * A released core, compiled from its commit by `sim/build-released.mjs`, run beside this
 * checkout's in one simulation (a mixed-version rollout). Its code is frozen, so its fields
 * cannot be renamed under the checks; each read still throws if a field is not there, so a
 * wrong build can never blind a check.
 *
 * Its lease is the `LeaseState` of the old design: `lockId`, `record.holder.leaseMs`, and
 * `writeIds`, the set of ids of the writes it sent.
 */
export async function loadReleasedBuild(dir: string, name: string): Promise<CoreBuild> {
  const client: unknown = await import(pathToFileURL(`${dir}/client/lock-client.js`).href);
  const lock: unknown = await import(pathToFileURL(`${dir}/client/lock.js`).href);
  const ClientClass = field(client, 'LockClient', 'module client/lock-client.js');
  const LockClass = field(lock, 'Lock', 'module client/lock.js');
  const inspect = field(lock, 'inspectLock', 'module client/lock.js');
  if (typeof ClientClass !== 'function' || typeof LockClass !== 'function' || typeof inspect !== 'function')
    throw new Error(`sim: ${dir} is not a build of core (LockClient, Lock, inspectLock)`);
  return {
    name,
    makeClient(options: LockClientOptions): LockClient {
      // Its public API is the one this checkout's simulation drives (the workload uses nothing newer).
      return Reflect.construct(ClientClass, [options]);
    },
    owns: (candidate: Lock<unknown>) => candidate instanceof LockClass,
    view(candidate: Lock<unknown>): LockView {
      const inspection: LockInspection = Reflect.apply(inspect, undefined, [candidate]);
      const lease = field(candidate, 'lease', 'Lock');
      const lockId = field(lease, 'lockId', 'LeaseState');
      const record = field(lease, 'record', 'LeaseState');
      const holder = field(record, 'holder', 'LockRecord');
      const leaseMs = holder === null || holder === undefined ? 0 : field(holder, 'leaseMs', 'holder');
      const writeIds = field(lease, 'writeIds', 'LeaseState');
      if (typeof lockId !== 'string' || !(writeIds instanceof Set))
        throw new Error('sim: a released lock whose lease has no lockId or writeIds');
      return {
        ...inspection,
        lockId,
        storedLeaseMs: typeof leaseMs === 'number' ? leaseMs : 0,
        wrote: (writeId: string) => writeIds.has(writeId),
      };
    },
  };
}

/** `owner[name]`, or an error naming what is missing (never undefined for a missing field). */
function field(owner: unknown, name: string, what: string): unknown {
  if (typeof owner !== 'object' && typeof owner !== 'function')
    throw new Error(`sim: released ${what} is not an object`);
  if (owner === null || !(name in owner)) throw new Error(`sim: released ${what} has no "${name}"`);
  return Reflect.get(owner, name);
}
