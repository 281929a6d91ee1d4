import {
  decodeRecord,
  encodeRecord,
  LockConfigError,
  LockCorruptedError,
  type LockRecord,
  type LockStore,
  type WriteOutcome,
} from '@latch/core/store';

/** What a row holds: the record as text, and a version that changes on every write. */
export interface Row {
  version: string;
  text: string;
}

/** A lock store over a Map, standing in for a table: one row per key, versioned writes. */
export function mapStore(rows = new Map<string, Row>()): LockStore {
  // Versions never repeat, even after a delete, so a stale version never matches a new row.
  let lastVersion = 0;
  const put = (key: string, record: LockRecord): WriteOutcome => {
    const version = String(++lastVersion);
    rows.set(key, { version, text: encodeRecord(record) });
    return { ok: true, version };
  };

  return {
    kind: 'map',
    maxRecordBytes: 64 * 1024,
    checkKey(key) {
      if (key.length > 1024) throw new LockConfigError('A lock key must be at most 1024 characters.');
    },
    recordBytes: (record) => Buffer.byteLength(encodeRecord(record)),
    async read(key) {
      const row = rows.get(key);
      if (!row) return null;
      try {
        return { version: row.version, record: decodeRecord(key, row.text) };
      } catch (error) {
        // Naming the version lets forceRelease replace exactly the unreadable row.
        throw error instanceof LockCorruptedError ? error.withVersion(row.version) : error;
      }
    },
    async write(key, record, condition) {
      const row = rows.get(key);
      const holds = 'absent' in condition ? row === undefined : row?.version === condition.version;
      return holds ? put(key, record) : { ok: false };
    },
    async delete(key, version) {
      if (rows.get(key)?.version !== version) return { ok: false };
      rows.delete(key);
      return { ok: true, version };
    },
    // For locks.list(): every key under the prefix on one page; the client reads each record.
    async list(prefix) {
      const keys = [...rows.keys()].filter((key) => key.startsWith(prefix)).sort();
      return { keys: keys.map((key) => ({ key })) };
    },
  };
}
