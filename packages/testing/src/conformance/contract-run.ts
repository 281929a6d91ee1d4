import { expect } from 'vitest';
import type { LatchErrors } from './latch-module.js';
import type {
  ClaimOutcomeShape,
  LockRecordShape,
  StoreUnderContract,
  VersionedRecordShape,
  WriteOutcomeShape,
} from './store-shapes.js';
import type { StoreUnderTest } from './store-under-test.js';

/** What the store contract's cases share; `subject` and `store` exist once `start()` has run. */
export interface ContractRun {
  readonly latch: LatchErrors;
  readonly name: string;
  subject(): StoreUnderTest;
  store(): StoreUnderContract;
}

let unique = 0;
/** Keys never repeat across tests or runs, so suites can share one bucket or table. */
export const freshKey = (label: string) => `contract/${label}/${Date.now().toString(36)}-${unique++}`;

/** The version a write that must apply produced; throws (showing the outcome) if it did not apply. */
export function expectOk(outcome: WriteOutcomeShape): string {
  if (!outcome.ok) throw new Error(`expected the write to apply, got ${JSON.stringify(outcome)}`);
  return outcome.version;
}

/** A claim that did not apply, certainly not by us, having found `current`. */
export function expectClaimConflict(outcome: ClaimOutcomeShape, current: VersionedRecordShape | null): void {
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  expect(outcome.current).toEqual(current);
  expect(outcome.maybeApplied ?? false).toBe(false);
}

/**
 * A write that did not apply. When the store reports the record it found, it must be the stored
 * one; a store that says `conflictsReturnCurrent` must always report it.
 */
export function expectCurrent(
  subject: StoreUnderTest,
  outcome: WriteOutcomeShape,
  expected: { version: string; record: LockRecordShape } | null,
): void {
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  expect(outcome.maybeApplied ?? false).toBe(false);
  if (subject.conflictsReturnCurrent) expect(outcome.current).toEqual(expected);
  else if (outcome.current !== undefined) expect(outcome.current).toEqual(expected);
}
