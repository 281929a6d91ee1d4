import { expect, test } from 'vitest';
import { LeaseProtocol } from '../src/engine/cas/lease-protocol.js';
import { slotOf } from '../src/engine/cas/slot-records.js';
import { newContender } from '../src/engine/lease-engine.js';
import { memoryStore } from '../src/index.js';
import { resolveClock } from '../src/shared/clock.js';
import { ManualTime } from './helpers/manual-time.js';

// A claim that finds its own slot in a record adopts that slot without a write. It may do so only
// from a record it has just read: the record it remembers from its own last write (or from an
// answer that came late) may have been freed or taken since, and adopting it then hands out a
// slot the store no longer holds.

test('a slot claim that remembers its own slot in a record freed since reads before adopting it', async () => {
  const time = new ManualTime();
  const store = memoryStore();
  const protocol = () =>
    new LeaseProtocol(
      store,
      resolveClock({ time: time.scheduler() }),
      { attempts: 1, baseMs: 50, maxMs: 500 },
      'owner',
    );
  const mine = protocol();
  const contender = newContender('waiter', { leaseMs: 10_000, limit: 2 });
  const first = await mine.claim('k', contender);
  expect(first.lease).not.toBeNull();
  // Another client frees the key: this client still remembers its own write, with the slot in it.
  expect(await protocol().forceRelease('k')).not.toBeNull();
  expect(slotOf(mine.known.get('k')?.current?.record, 'waiter')).toBeDefined();

  const again = await mine.claim('k', contender);
  const stored = await store.read('k');
  // Held only as the store holds it: the version the lease writes on is the record's, with the slot in it.
  expect(again.lease?.version).toBe(stored?.version);
  expect(slotOf(stored?.record, 'waiter')).toBeDefined();
});
