import { expect, test } from 'vitest';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// A forceRelease of the writer's own client: the lease ends at once, and a claim whose way
// overlapped the force (it may have landed before the force freed the key) is renewed before its
// caller gets it.

test('a forceRelease of its own client ends a held lease at once', async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  const writer = writerOn(store, time, 1);
  void writer.acquire();
  await time.advance(1);
  writer.forceReleasing().end();
  expect(writer.signal.aborted).toBe(true);
});

test('a claim in flight when the force began is renewed before its caller gets it', async () => {
  const time = new ManualTime();
  const { store, state, releaseWrites } = watchedStore();
  const writer = writerOn(store, time, 1);
  state.holdWrites = true;
  let acquired = false;
  void writer.acquire().then(() => {
    acquired = true;
  });
  await time.advance(1);
  const force = writer.forceReleasing();
  force.end();
  releaseWrites(); // the claim lands after the force, as far as its answer can tell
  await time.advance(1);
  expect(acquired).toBe(true);
  expect(state.sent).toHaveLength(2); // the claim, then the renewal that confirmed it
});

test('a claim sent while the force was on its way waits for it, then is renewed first; after the force, one write is enough', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1);
  const force = writer.forceReleasing();
  let acquired = false;
  void writer.acquire().then(() => {
    acquired = true;
  });
  await time.advance(1);
  expect(state.sent).toHaveLength(1); // the claim, answered, its answer held until the force is
  expect(acquired).toBe(false);
  force.end();
  await time.advance(1);
  expect(acquired).toBe(true);
  expect(state.sent).toHaveLength(2); // then the renewal that confirmed it
  await writer.release();
  const next = writerOn(store, time, 2);
  void next.acquire();
  await time.advance(1);
  expect(next.state.lease).not.toBeNull();
  // The release, then the next writer's claims: as if the key were new, then on the version it
  // read. None is a renewal: with the force answered, a claim is trusted as it lands.
  expect(state.sent.map((record) => record.writeId)).toEqual(['w1:1', 'w1:2', 'w1:3', 'w2:1', 'w2:2']);
  expect(state.sent[4]!.holder?.acquiredAt).toBe(state.sent[4]!.holder?.renewedAt);
});
