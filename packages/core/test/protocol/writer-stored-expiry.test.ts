import { expect, test } from 'vitest';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// What a writer stores as its lease's end: the wall-clock expiry trusted waiters go by, or none
// on untrusted clocks (a wrong wall clock must not let a trusted waiter take a live lease over).

for (const clockMode of ['trusted', 'untrusted'] as const) {
  test(`on ${clockMode} clocks, a claim and a renewal store ${clockMode === 'trusted' ? 'their expiry' : 'no expiry'} beside the lease length`, async () => {
    const time = new ManualTime();
    const { store, state } = watchedStore();
    const writer = writerOn(store, time, 1, { clockMode });
    void writer.acquire();
    await time.advance(1);
    await time.advance(5_000); // past the renewal
    const [claim, renewal] = state.sent;
    expect(renewal).toBeDefined();
    for (const record of [claim!, renewal!]) {
      const { renewedAt, leaseMs, expiresAt } = record.holder!;
      expect(leaseMs).toBe(10_000);
      expect(expiresAt).toBe(clockMode === 'trusted' ? renewedAt + 10_000 : null);
    }
  });
}
