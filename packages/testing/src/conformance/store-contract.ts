import { afterAll, beforeAll, describe } from 'vitest';
import { claimCases } from './contract-claim.js';
import { listContractCases } from './contract-list.js';
import { recordCases } from './contract-records.js';
import type { ContractRun } from './contract-run.js';
import { writeCases } from './contract-writes.js';
import type { LatchErrors } from './latch-module.js';
import type { StoreUnderTest } from './store-under-test.js';

export interface StoreContractOptions {
  /** The module the error classes come from: `import * as latch from '@latch/core'` (or `@latch/core/store`). */
  latch: LatchErrors;
  /** Names the suite: `<name>: LockStore contract`. */
  name: string;
  /** Makes the store, once, before the first case. */
  start(): Promise<StoreUnderTest>;
  /** Whether the store offers the optional one-request `claim` (default false); checked, and if so tested. */
  claim?: boolean;
  /** Whether the store offers the optional `list` (default false); checked, and if so tested. */
  list?: boolean;
}

/**
 * The LockStore contract every backend must meet, run against a real instance of it:
 * conditional create, replace and delete by version, records and keys kept exactly, sizes,
 * key limits, corrupted records reported, and (when offered) `claim` and `list`.
 */
export function describeStoreContract(options: StoreContractOptions): void {
  const { latch, name, start } = options;
  let subject: StoreUnderTest | undefined;
  const made = () => {
    if (!subject) throw new Error(`${name}: start() has not made the store`);
    return subject;
  };
  const run: ContractRun = { latch, name, subject: made, store: () => made().store };

  describe(`${name}: LockStore contract`, () => {
    beforeAll(async () => {
      subject = await start();
    });
    afterAll(async () => {
      await subject?.cleanup?.();
    });

    writeCases(run);
    recordCases(run);
    describe('claim', () => claimCases(run, options.claim ?? false));
    describe('list', () => listContractCases(run, options.list ?? false));
  });
}
