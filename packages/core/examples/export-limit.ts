import { LockClient, memoryStore } from '@latch/core';

// Two replicas sharing one store: at most 2 exports per customer run at once across both.
const store = memoryStore();
const replicaA = new LockClient({ store });
const replicaB = new LockClient({ store });

export async function exportsPerCustomer(): Promise<string[]> {
  const log: string[] = [];
  const options = { limit: 2, context: 'nightly export' };

  // limit: 2 makes the key a semaphore: two holders at once, each with its own lock and token.
  const first = await replicaA.tryAcquire('export/customer-42', options);
  const second = await replicaB.tryAcquire('export/customer-42', options);
  log.push(`running exports with tokens ${first?.fencingToken} and ${second?.fencingToken}`);

  // A third is refused (tryAcquire) or waits for a slot (acquire).
  const third = await replicaA.tryAcquire('export/customer-42', options);
  log.push(`third export ${third ? 'started' : 'must wait'}`);

  const info = await replicaB.inspect('export/customer-42');
  log.push(`${info.holders.length} of ${info.limit} slots taken`);

  // A finished export frees its slot; the next one gets a higher token.
  await first?.release();
  const next = await replicaB.acquire('export/customer-42', { ...options, waitMs: 5_000 });
  log.push(`next export got token ${next.fencingToken}`);
  await Promise.all([second?.release(), next.release()]);
  return log;
}
