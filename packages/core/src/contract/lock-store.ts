import type { LockCorruptedError } from '../shared/errors.js';
import type { LockRecord, VersionedRecord } from './lock-record.js';

/** What a conditional write must find to apply. */
export type WriteCondition = { absent: true } | { version: string };

export type WriteOutcome =
  | { ok: true; version: string }
  /**
   * The condition did not hold. `current` is the record the store found, when it could tell
   * without another request (null = no record); undefined = unknown, read it if needed.
   * `maybeApplied` is true when the request may have been sent more than once (an SDK retry
   * after a lost response), so the conflicting record may be our own write.
   */
  | { ok: false; current?: VersionedRecord | null; maybeApplied?: boolean };

/**
 * A claim the store may apply in one request: write `record` (with `token` replaced by the
 * stored token + 1) when there is no record, the lock is free, or, in `expiredBefore` mode,
 * the holder's lease ended before that wall-clock time; in `version` mode, when the stored
 * version equals it.
 */
export interface ClaimRequest {
  record: LockRecord;
  expiredBefore?: number;
  version?: string;
  /**
   * The highest token this client has seen for the key: a claim of an absent record takes
   * `tokenFloor + 1`, and a claim of a record whose token is lower does not apply.
   */
  tokenFloor?: number;
}

/**
 * The smallest surface a backend offers: read, create-if-absent, replace-if-version,
 * delete-if-version, all on one record per key. Lock semantics live above it, once.
 */
export interface LockStore {
  /** Short name for messages and metrics: 'memory', 's3', 'dynamodb'. */
  readonly kind: string;
  /** Largest serialised record the store accepts, in bytes. */
  readonly maxRecordBytes: number;
  /** Throws LockConfigError when the key cannot be stored (too long with prefix, etc.). */
  checkKey(key: string): void;
  /** The record, or null when there is none. An unreadable record throws LockCorruptedError naming its version. */
  read(key: string): Promise<VersionedRecord | null>;
  write(key: string, record: LockRecord, condition: WriteCondition): Promise<WriteOutcome>;
  delete(key: string, version: string): Promise<WriteOutcome>;
  /** Optional one-request claim; the protocol uses it when present. */
  claim?(key: string, request: ClaimRequest): Promise<ClaimOutcome>;
  /**
   * Optional, for `locks.list()`: one page of the keys that start with `prefix` ('' for every key
   * of this store), starting at `cursor` (undefined for the first page). Each key comes once, on
   * one page. Without this method `locks.list()` throws a LockConfigError before any request.
   */
  list?(prefix: string, cursor?: string): Promise<ListPage>;
  /**
   * Optional: the store's wall clock, in ms since the epoch, as the HTTP `Date` of its answer to
   * one read of `key` states it (whole seconds); undefined when the answer has none. `verifyStore`
   * compares it with the client's clock.
   */
  serverTime?(key: string): Promise<number | undefined>;
  /**
   * Optional: whether a LockClient should check this store with `verifyStore` before its first
   * lock, and under what name: one check per name and process. Undefined (or a method that
   * resolves undefined): no check.
   */
  verifyScope?(): Promise<string | undefined>;
  /** Serialised size of a record in this store, to reject oversized data before sending. */
  recordBytes(record: LockRecord): number;
}

export type ClaimOutcome =
  | { ok: true; version: string; record: LockRecord }
  | { ok: false; current: VersionedRecord | null; maybeApplied?: boolean };

/** One page of `LockStore.list`. */
export interface ListPage {
  /** Keys on this page, in the store's order. */
  keys: ListedKey[];
  /** What to pass as `cursor` for the next page; undefined on the last page. */
  cursor?: string | undefined;
}

/**
 * One key a listing found. A store whose listing answer carries the records (a DynamoDB Scan)
 * gives `current`, or `error` for one it cannot decode; a store whose listing names keys only
 * (S3's ListObjectsV2) gives neither, and the client then reads the key (`read`), at most a few
 * at a time. A key whose record is gone by then is left out.
 */
export interface ListedKey {
  key: string;
  /** The key's record, when the listing answer carried it. */
  current?: VersionedRecord | undefined;
  /** The key's record cannot be read (a corrupted record, or something else stored under the key). */
  error?: LockCorruptedError | undefined;
}
