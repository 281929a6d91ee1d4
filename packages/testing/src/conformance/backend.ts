/**
 * A backend under test, made by `start()` once per suite. `store()` returns a store over the
 * same storage each time, so several LockClients built on it behave as replicas of one service.
 * `Store` is whatever your `LockClient` takes as `store`.
 */
export interface ConformanceBackend<Store> {
  store(): Store;
  /** Makes every write fail (as the backend would fail it) until the returned function is called. */
  breakWrites(): () => void;
  /** Writes a record body the store cannot parse under `key`. */
  corrupt(key: string): Promise<void>;
  /** Listing requests (pages) the store has answered so far: for the paging case (`listPagingLocks`). */
  listRequests?(): number;
  /** Stops what `start()` started. */
  stop?(): Promise<void>;
}

/**
 * What a backend does differently by design, each with the reason. The suite does not skip
 * the case: it checks the documented alternative behaviour instead, and the case's title
 * names the limitation.
 */
export interface Limitations {
  /** Keeps no lock data: update(data) and release({ data }) throw LockConfigError. */
  data?: string;
  /** Fencing tokens increase but are not consecutive (not +1 per acquisition). */
  consecutiveTokens?: string;
  /** resume(handle) throws LockConfigError (release by handle still works). */
  resume?: string;
  /** clock: 'untrusted' is refused with LockConfigError. */
  untrustedClock?: string;
  /** A takeover by a waiter whose clock runs ahead leaves no trace once it ends: the old holder's release cannot tell. */
  takeoverTrace?: string;
  /** A holder whose lock was force-released learns of it without the new holder's name. */
  newHolderInLoss?: string;
  /** No semaphores: `limit` above 1 is refused with LockConfigError before any request (locks and acquireAll still work). */
  semaphores?: string;
  /** The store cannot list its keys: `list()` throws LockConfigError when called, before any request. */
  list?: string;
  /**
   * Keeps nothing for a lock nobody holds: `list()` leaves out a released lock, and shows one
   * whose lease ran out as free (token 0) while something of it is stored, as `inspect` does.
   */
  listFree?: string;
  /** `list()` yields keys in no particular order, not in key order. */
  listOrder?: string;
}
