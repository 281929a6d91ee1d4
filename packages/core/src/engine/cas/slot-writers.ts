import type { VersionedRecord } from '../../contract/lock-record.js';
import type { WriterDriver } from './writer-driver.js';

/**
 * A client's writers of semaphore slots, by key. Each write of one moves the record's version
 * away from the others' last writes: they learn of it (`sawSibling`), so that their next write
 * is built on the record as it is instead of failing and reading first.
 */
export class SlotWriters {
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

  /** `from` wrote `current`: the other writers of the key learn of it. */
  sawWrite(key: string, from: WriterDriver, current: VersionedRecord): void {
    for (const writer of this.#byKey.get(key) ?? []) if (writer !== from) writer.sawSibling(current);
  }
}
