// The store side of `@latch/core`, as the store contract sees it. These mirror `LockStore`,
// `LockRecord` and friends from `@latch/core/store` structurally, with only the members the
// suites use: @latch/testing does not depend on @latch/core, and a store typed against the
// real ones fits these (core's own tests check that it does, which keeps the two in step).

/** The lease inside a record; mirrors core's `LeaseHolder`. */
export interface LeaseHolderShape {
  owner: string;
  lockId: string;
  acquiredAt: number;
  renewedAt: number;
  /** null for a fail-closed lease that never expires. */
  leaseMs: number | null;
  expiresAt: number | null;
  context?: string | undefined;
}

/** One record per key; mirrors core's `LockRecord`. */
export interface LockRecordShape {
  token: number;
  /** null when the lock is free. */
  holder: LeaseHolderShape | null;
  data?: unknown;
  writeId: string;
}

/** A record as read, with the version a conditional write names; mirrors `VersionedRecord`. */
export interface VersionedRecordShape {
  version: string;
  record: LockRecordShape;
}

/** What a conditional write must find to apply; mirrors `WriteCondition`. */
export type WriteConditionShape = { absent: true } | { version: string };

/** Mirrors `WriteOutcome`: `current` is the record found, when the store could tell. */
export type WriteOutcomeShape =
  | { ok: true; version: string }
  | { ok: false; current?: VersionedRecordShape | null; maybeApplied?: boolean };

/** Mirrors `ClaimRequest`, without the fields the suites never send. */
export interface ClaimRequestShape {
  record: LockRecordShape;
  expiredBefore?: number;
  version?: string;
}

/** Mirrors `ClaimOutcome`. */
export type ClaimOutcomeShape =
  | { ok: true; version: string; record: LockRecordShape }
  | { ok: false; current: VersionedRecordShape | null; maybeApplied?: boolean };

/** One key of a listing page; mirrors core's `ListedKey`. */
export interface ListedKeyShape {
  key: string;
  current?: VersionedRecordShape | undefined;
  error?: Error | undefined;
}

/** One page of `list`; mirrors core's `ListPage`. */
export interface ListPageShape {
  keys: ListedKeyShape[];
  cursor?: string | undefined;
}

/** What the store contract calls on a store: core's `LockStore`, as far as the suite uses it. */
export interface StoreUnderContract {
  readonly maxRecordBytes: number;
  checkKey(key: string): void;
  read(key: string): Promise<VersionedRecordShape | null>;
  write(key: string, record: LockRecordShape, condition: WriteConditionShape): Promise<WriteOutcomeShape>;
  delete(key: string, version: string): Promise<WriteOutcomeShape>;
  claim?(key: string, request: ClaimRequestShape): Promise<ClaimOutcomeShape>;
  list?(prefix: string, cursor?: string): Promise<ListPageShape>;
  recordBytes(record: LockRecordShape): number;
}
