import { type Campaign, LockClient, type LockStore } from '@latch/core';

// Every replica campaigns; one leads at a time. Stopping resigns, so a follower takes over at once.
export function runScheduler(store: LockStore, replica: string, onTerm: (term: number) => void): Campaign {
  const locks = new LockClient({ store, leaseMs: 10_000, owner: replica });
  return locks.campaign('scheduler/leader', {
    context: replica,
    onElected(lock) {
      // lock.fencingToken is the term number; lock.signal aborts if leadership is lost.
      onTerm(lock.fencingToken);
    },
    onDemoted(reason) {
      console.log(`${replica} stopped leading: ${reason}`);
    },
  });
}
