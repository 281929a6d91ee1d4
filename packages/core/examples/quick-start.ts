import { LockClient, memoryStore } from '@latch/core';

// memoryStore() keeps locks in this process: for tests and local runs.
// In production pass s3Store(...) or dynamoStore(...) instead; nothing else changes.
const locks = new LockClient({ store: memoryStore(), leaseMs: 30_000 });

export async function quickStart(): Promise<string[]> {
  const log: string[] = [];

  // withLock: acquire (waiting up to 10 s), run, always release.
  await locks.withLock(
    'reports/daily',
    async (lock) => {
      log.push(`building the report with fencing token ${lock.fencingToken}`);
    },
    { waitMs: 10_000 },
  );

  // tryAcquire never waits: null when someone else holds the lock.
  const lock = await locks.tryAcquire('reports/daily', { context: 'manual run by ops' });
  if (lock) {
    log.push(`second run, token ${lock.fencingToken}`);
    await lock.release({ data: { lastRun: '2026-11-23' } });
  }

  const info = await locks.inspect('reports/daily');
  log.push(`now ${info.state}, last token ${info.fencingToken}, data ${JSON.stringify(info.data)}`);
  return log;
}
