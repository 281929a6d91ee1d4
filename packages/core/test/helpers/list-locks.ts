import { LockClient, type LockClientOptions, type LockEvent, type LockInfo } from '../../src/index.js';

/** Every lock a new client's `list(prefix)` yields on `store`, and the `unreadable` events it reported. */
export async function listLocks(
  store: LockClientOptions['store'],
  prefix?: string,
): Promise<{ found: LockInfo[]; unreadable: Extract<LockEvent, { type: 'unreadable' }>[] }> {
  const unreadable: Extract<LockEvent, { type: 'unreadable' }>[] = [];
  const locks = new LockClient({
    store,
    onEvent: (event) => {
      if (event.type === 'unreadable') unreadable.push(event);
    },
  });
  const found: LockInfo[] = [];
  for await (const info of locks.list(prefix)) found.push(info);
  return { found, unreadable };
}
