import type { ListedKey } from '../../contract/lock-store.js';
import { LockConfigError, LockCorruptedError, LockStoreError } from '../../shared/errors.js';
import { mapInOrder } from '../../shared/map-in-order.js';
import { withRetry } from '../../shared/retry.js';
import { LIST_READS_AT_ONCE, type ListedLock } from '../lease-engine.js';
import type { CasParts } from './cas-parts.js';

/** Refuses, before any request, a store that has no `list` method. */
export function checkStoreLists(parts: CasParts): void {
  if (typeof parts.store.list === 'function') return;
  throw new LockConfigError(
    `locks.list() needs a store that can list its keys, and the ${parts.store.kind} store has no list method. Add list(prefix, cursor) to it, returning a page of { keys: [{ key }], cursor } (see LockStore.list in @latch/core/store).`,
  );
}

/**
 * Every record of a key that starts with `prefix`, page by page: the records a page carries as
 * they are, the keys it only names read with `read` (at most LIST_READS_AT_ONCE at a time). Not
 * remembered as records seen: a listing must not push the keys this client uses out of memory.
 */
export function listRecords(
  parts: CasParts,
  prefix: string,
  signal?: AbortSignal,
): AsyncIterable<ListedLock> {
  return mapInOrder(listedKeys(parts, prefix, signal), LIST_READS_AT_ONCE, (listed) =>
    resolveListed(parts, listed, signal),
  );
}

async function* listedKeys(parts: CasParts, prefix: string, signal?: AbortSignal): AsyncGenerator<ListedKey> {
  const { store, retry, clock } = parts;
  let cursor: string | undefined;
  do {
    signal?.throwIfAborted();
    const from = cursor;
    const page = await withRetry(retry, clock.time, () => store.list!(prefix, from), signal);
    yield* page.keys;
    cursor = page.cursor;
    if (cursor !== undefined && cursor === from) {
      throw new LockStoreError(
        `The ${store.kind} store's list returned the cursor it was given; it would list the same page for ever.`,
        { retryable: false },
      );
    }
  } while (cursor !== undefined);
}

/** The key's record as the page gave it, or as read now; undefined when it is gone. */
async function resolveListed(
  parts: CasParts,
  listed: ListedKey,
  signal?: AbortSignal,
): Promise<ListedLock | undefined> {
  const { key } = listed;
  if (listed.error) return { key, error: listed.error };
  if (listed.current) return { key, current: listed.current };
  signal?.throwIfAborted();
  try {
    const current = await withRetry(parts.retry, parts.clock.time, () => parts.store.read(key), signal);
    return current ? { key, current } : undefined;
  } catch (error) {
    if (error instanceof LockCorruptedError) return { key, error };
    throw error;
  }
}
