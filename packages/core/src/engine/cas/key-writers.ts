import type { VersionedRecord } from '../../contract/lock-record.js';
import type { WriterDriver } from './writer-driver.js';

/**
 * A client's writers, by key. A semaphore slot's write moves the record's version away from the
 * other slots' last writes, and a read of the client may show the key taken: the other writers
 * learn of it (`sawRecord`), so that their next write is built on the record as it is, or a
 * holder passes nothing on when someone took the key early.
 */
export class KeyWriters {
  readonly #byKey = new Map<string, Set<WriterDriver>>();

  add(key: string, writer: WriterDriver): void {
    let writers = this.#byKey.get(key);
    if (!writers) {
      writers = new Set();
      this.#byKey.set(key, writers);
    }
    writers.add(writer);
    void writer.ended.then(() => {
      writers.delete(writer);
      if (writers.size === 0 && this.#byKey.get(key) === writers) this.#byKey.delete(key);
    });
  }

  /** The client saw `current` (written by `from`, or read): the key's other writers learn of it. */
  saw(key: string, current: VersionedRecord, from?: WriterDriver): void {
    for (const writer of this.#byKey.get(key) ?? []) if (writer !== from) writer.sawRecord(current);
  }
}
