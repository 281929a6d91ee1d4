// A handler that locks in memory only: bundled with the SDK installed and not external, its
// bundle must carry neither SDK client (core has no side effects at load, so a bundler drops
// the stores it does not use).
import { LockClient, memoryStore } from '@latch/core';

const locks = new LockClient({ store: memoryStore() });

export const handler = async (): Promise<number> => locks.withLock('memory', (lock) => lock.fencingToken);
