import type { LockRecord, VersionedRecord } from '../contract/lock-record.js';
import type { ListedKey, LockStore, WriteCondition, WriteOutcome } from '../contract/lock-store.js';
import { decodeRecord, encodeRecord } from '../contract/record-codec.js';
import { LockConfigError, LockCorruptedError } from '../shared/errors.js';
import { compareUtf8 } from '../shared/key-order.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import { checkMaxRecordBytes } from '../shared/validation.js';

export interface MemoryStoreOptions {
  /** Largest serialised record in bytes (default 256 KiB, like the S3 store). */
  maxRecordBytes?: number;
}

const MEMORY_STORE_OPTIONS: Record<keyof MemoryStoreOptions, true> = { maxRecordBytes: true };
const MEMORY_STORE_OPTION_KEYS = Object.keys(MEMORY_STORE_OPTIONS);

/** Keys per page of a listing: S3's page size, so that paging is exercised in process too. */
const LIST_PAGE_KEYS = 1000;

export interface MemoryStore extends LockStore {
  /** Raw JSON documents by key, for tests that look at or tamper with what is stored. */
  readonly documents: Map<string, { version: string; text: string }>;
  /**
   * Requests sent to this store so far (each read, write, delete and page of a listing), for
   * tests that count what an operation costs, or show that a refused call sent nothing.
   */
  readonly requestCount: number;
}

/**
 * In-process store with the same contract as the network stores: records are kept as JSON
 * text (so data is copied, never shared by reference) under a counter version.
 * Share one instance between LockClients to simulate several replicas in one process.
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  checkOptionKeys('memoryStore()', options, MEMORY_STORE_OPTION_KEYS);
  const maxRecordBytes = checkMaxRecordBytes('memoryStore', options.maxRecordBytes ?? 256 * 1024);
  const documents = new Map<string, { version: string; text: string }>();
  let nextVersion = 1;
  let requestCount = 0;

  const current = (key: string): VersionedRecord | null => {
    const doc = documents.get(key);
    if (!doc) return null;
    try {
      return { version: doc.version, record: decodeRecord(key, doc.text) };
    } catch (error) {
      throw error instanceof LockCorruptedError ? error.withVersion(doc.version) : error;
    }
  };

  const listed = (key: string): ListedKey => {
    try {
      return { key, current: current(key)! };
    } catch (error) {
      if (error instanceof LockCorruptedError) return { key, error };
      throw error;
    }
  };

  const put = (key: string, record: LockRecord): WriteOutcome => {
    const version = String(nextVersion++);
    documents.set(key, { version, text: encodeRecord(record) });
    return { ok: true, version };
  };

  return {
    kind: 'memory',
    maxRecordBytes,
    documents,
    get requestCount() {
      return requestCount;
    },
    checkKey(key: string) {
      if (key.length > 4096)
        throw new LockConfigError('Lock key must be at most 4096 characters in the memory store.');
    },
    recordBytes: (record) => Buffer.byteLength(encodeRecord(record)),
    async read(key) {
      requestCount++;
      return current(key);
    },
    async write(key, record, condition: WriteCondition) {
      requestCount++;
      const doc = documents.get(key);
      if ('absent' in condition ? doc !== undefined : doc?.version !== condition.version) {
        return { ok: false };
      }
      return put(key, record);
    },
    async delete(key, version) {
      requestCount++;
      if (documents.get(key)?.version !== version) return { ok: false };
      documents.delete(key);
      return { ok: true, version };
    },
    // Pages of LIST_PAGE_KEYS in key order, as S3 lists them, each carrying its records.
    async list(prefix, cursor) {
      requestCount++;
      const keys = [...documents.keys()]
        .filter((key) => key.startsWith(prefix) && (cursor === undefined || compareUtf8(key, cursor) > 0))
        .sort(compareUtf8);
      const page = keys.slice(0, LIST_PAGE_KEYS);
      return { keys: page.map(listed), cursor: keys.length > page.length ? page.at(-1) : undefined };
    },
  };
}
