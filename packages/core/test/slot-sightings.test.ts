import { expect, test } from 'vitest';
import type { SlotHolder } from '../src/contract/lock-record.js';
import { SlotSightings } from '../src/engine/cas/slot-claimable.js';

// A semaphore holder on untrusted clocks is judged gone once this client has seen its entry
// unchanged for its lease. Records do not arrive in order (another lease's older copy, a late
// answer), and an older reading must not restart the watch of the entry that replaced it.

const entry = (writeId: string): SlotHolder => ({
  owner: 'other',
  lockId: 'A',
  token: 1,
  acquiredAt: 0,
  renewedAt: 0,
  leaseMs: 1_000,
  expiresAt: null,
  writeId,
});

test('an entry keeps its first sighting when an older entry of the same holder is read after it', () => {
  const sightings = new SlotSightings();
  expect(sightings.firstSeen('s', entry('w1'), 0)).toBe(0);
  expect(sightings.firstSeen('s', entry('w2'), 100)).toBe(100); // renewed: watched anew
  expect(sightings.firstSeen('s', entry('w1'), 200)).toBe(0); // an older record read late
  expect(sightings.firstSeen('s', entry('w2'), 5_000)).toBe(100); // still watched since 100
});

test('the sightings looked at least recently are the ones forgotten', () => {
  const sightings = new SlotSightings(2);
  sightings.firstSeen('s', entry('w1'), 0);
  sightings.firstSeen('s', entry('w2'), 10);
  sightings.firstSeen('s', entry('w1'), 20); // looked at again
  sightings.firstSeen('s', entry('w3'), 30); // over capacity: w2 goes
  expect(sightings.firstSeen('s', entry('w1'), 40)).toBe(0);
  expect(sightings.firstSeen('s', entry('w2'), 50)).toBe(50);
});
