import { afterAll, beforeAll, describe } from 'vitest';
import type { ConformanceBackend, Limitations } from './backend.js';
import type { LatchModule } from './latch-module.js';
import { listCases } from './list-cases.js';
import { apiCases } from './lock-api.js';
import { clockCases } from './lock-clocks.js';
import { dataCases } from './lock-data.js';
import { exclusivityCases } from './lock-exclusivity.js';
import { lossCases } from './lock-loss.js';
import { lockRun } from './lock-run.js';
import { multiKeyCases } from './multi-key-cases.js';
import { semaphoreCases } from './semaphore-cases.js';

export interface LockConformanceOptions<Store> {
  /** The core module to test with: `import * as latch from '@latch/core'`. */
  latch: LatchModule<Store>;
  /** Names the suite: `LockClient on <name>`. */
  name: string;
  /** Starts the backend, once, before the first case. */
  start(): Promise<ConformanceBackend<Store>>;
  /** What the backend does differently by design, each with its reason. */
  limitations?: Limitations;
  /** Rounds per contender in the mutual-exclusion case (default 25); fewer for a store whose acquisitions wait. */
  mutexRounds?: number;
  /**
   * How many locks fill more than one page of the store's listing (1001 on S3). With it, and the
   * backend's `listRequests()`, a case lists that many locks and checks it took more than one request.
   */
  listPagingLocks?: number;
}

/**
 * The behaviour every store must show through LockClient: mutual exclusion, fencing tokens,
 * expiry and takeover, renewal and loss, clocks, data, hand-off, bad input, semaphores (`limit`),
 * multi-key sets (`acquireAll`) and listing (`list`). Where a backend is limited by design (`limitations`, each
 * with its reason), the case checks the documented alternative instead, and its title says so.
 */
export function describeLockConformance<Store>(options: LockConformanceOptions<Store>): void {
  const { latch, name, start } = options;
  let backend: ConformanceBackend<Store> | undefined;
  const run = lockRun(
    latch,
    () => {
      if (!backend) throw new Error(`${name}: start() has not made the backend`);
      return backend;
    },
    options.limitations ?? {},
    options.mutexRounds ?? 25,
    options.listPagingLocks,
  );
  describe(`LockClient on ${name}`, () => {
    beforeAll(async () => {
      backend = await start();
    });
    afterAll(async () => {
      await backend?.stop?.();
    });

    exclusivityCases(run);
    lossCases(run);
    clockCases(run);
    dataCases(run);
    apiCases(run);
    semaphoreCases(run);
    multiKeyCases(run);
    listCases(run);
  });
}
