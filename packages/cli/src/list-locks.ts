import { LockClient, type LockClientOptions, type LockCorruptedError, type LockInfo } from '@latch/core';

/** One listing: the locks, sorted by key, and the keys left out because their record cannot be read. */
export interface Listing {
  locks: LockInfo[];
  unreadable: LockCorruptedError[];
}

/**
 * Lists the locks of one store, as often as asked. Core leaves an unreadable record out of a
 * listing and reports it as an event: it is collected here, so the operator is told about it
 * rather than shown a store without it.
 */
export class LockLister {
  private readonly locks: LockClient;
  private unreadable: LockCorruptedError[] = [];

  constructor(store: LockClientOptions['store']) {
    this.locks = new LockClient({
      store,
      heartbeatMs: false,
      onEvent: (event) => {
        if (event.type === 'unreadable') this.unreadable.push(event.error);
      },
    });
  }

  /**
   * Every lock under `prefix` (within the store's own prefix), sorted by key. All of them are
   * read before anything is shown: stores list in their own order (DynamoDB in none at all).
   */
  async list(prefix: string | undefined, signal?: AbortSignal): Promise<Listing> {
    this.unreadable = [];
    const locks: LockInfo[] = [];
    for await (const info of this.locks.list(prefix, signal ? { signal } : {})) locks.push(info);
    // By UTF-16 code units, not the locale: the same order on every machine.
    locks.sort((a, b) => compareKeys(a.key, b.key));
    return { locks, unreadable: this.unreadable.sort((a, b) => compareKeys(a.key, b.key)) };
  }

  close(): Promise<void> {
    return this.locks.close();
  }
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One line per record left out of a listing, saying why and what frees the key. */
export function describeUnreadable(unreadable: readonly LockCorruptedError[]): string[] {
  return unreadable.map(
    (error) =>
      `left out "${error.key}": its record cannot be read (${error.reason}); 'latch force-release ${error.key}' replaces it with a free one`,
  );
}
