import type { LockStore } from '../../src/index.js';

/**
 * A backend under test: `store()` returns a store over the same storage each time, so several
 * LockClients built on it behave as replicas of one service.
 */
export interface ConformanceBackend {
  name: string;
  store(): LockStore;
  /** Makes every write fail (as the backend would fail it) until the returned function is called. */
  breakWrites(): () => void;
  /** Writes a record body the store cannot parse under `key`. */
  corrupt(key: string): Promise<void>;
  stop(): Promise<void>;
}

let counter = 0;
/** A key no other test uses, so tests can share one backend. */
export function uniqueKey(label: string): string {
  counter += 1;
  return `conformance/${label}/${process.pid}-${Date.now().toString(36)}-${counter}`;
}
