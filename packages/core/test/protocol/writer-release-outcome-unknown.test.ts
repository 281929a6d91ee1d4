import { expect, test } from 'vitest';
import type { LockRecord } from '../../src/contract/lock-record.js';
import type { LockStore, WriteCondition } from '../../src/contract/lock-store.js';
import { memoryStore } from '../../src/index.js';
import { LockStoreError } from '../../src/shared/errors.js';
import { ManualTime } from '../helpers/manual-time.js';
import { writerOn } from '../helpers/manual-writer.js';

// A release whose write may have landed: a read resolves it; when that read fails, its caller
// hears so (a store error that says it may have been applied), and the writer settles it in the
// background.

/** A memory store whose next `lose` writes apply but whose answers are lost. */
function losingStore() {
  const inner = memoryStore();
  const state = { lose: 0, writes: 0, failReads: false };
  const store = Object.assign(Object.create(inner) as LockStore, {
    async read(key: string) {
      if (state.failReads)
        throw new LockStoreError('connection refused', { retryable: true, reason: 'unavailable' });
      return inner.read(key);
    },
    async write(key: string, record: LockRecord, condition: WriteCondition) {
      state.writes++;
      const outcome = await inner.write(key, record, condition);
      if (state.lose > 0) {
        state.lose--;
        throw new LockStoreError('socket hang up', {
          retryable: true,
          maybeApplied: true,
          reason: 'unavailable',
        });
      }
      return outcome;
    },
  });
  return { store, inner, state };
}

/** A writer holding key "k" of a losingStore. */
async function holding() {
  const time = new ManualTime();
  const { store, inner, state } = losingStore();
  const writer = writerOn(store, time, 1);
  void writer.acquire();
  await time.advance(1);
  return { time, inner, state, writer };
}

test('a release whose answer was lost is resolved by a read: it landed, and the release resolves', async () => {
  const { inner, state, writer } = await holding();
  state.lose = 1;
  await writer.release({ n: 1 });
  expect(await writer.ended).toBe('released');
  const { record } = (await inner.read('k'))!;
  expect(record.holder).toBeNull();
  expect(record.data).toEqual({ n: 1 });
  expect(state.writes).toBe(2); // the claim and the release: the read told the rest
});

test('a release whose answer was lost and whose read failed rejects as maybe applied; the writer settles it in the background', async () => {
  const { time, inner, state, writer } = await holding();
  state.lose = 1;
  state.failReads = true;
  const error = await writer.release({ n: 1 }).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(LockStoreError);
  expect((error as LockStoreError).maybeApplied).toBe(true);
  state.failReads = false;
  await time.advance(1_000);
  expect(await writer.ended).toBe('released');
  expect((await inner.read('k'))!.record.data).toEqual({ n: 1 });
});

test('a release called again looks at the store now: told again while it fails, it stores its own data once it answers', async () => {
  const { inner, state, writer } = await holding();
  state.lose = 1;
  state.failReads = true; // the read that would settle it fails
  await expect(writer.release({ n: 1 })).rejects.toBeInstanceOf(LockStoreError);
  await expect(writer.release({ n: 2 })).rejects.toMatchObject({ maybeApplied: true });
  state.failReads = false;
  await writer.release({ n: 3 }); // no time passes: the call itself makes the writer look
  // The first release landed; the last call's data was then written over it.
  expect((await inner.read('k'))!.record.data).toEqual({ n: 3 });
  expect(state.writes).toBe(3);
  expect(await writer.ended).toBe('released');
});

test('a release called again with no data (close retrying it) keeps the data an earlier call still waits to see stored', async () => {
  const { inner, state, writer } = await holding();
  state.lose = 1;
  state.failReads = true;
  await expect(writer.release()).rejects.toMatchObject({ maybeApplied: true }); // landed, unseen
  state.failReads = false;
  const withData = writer.release({ n: 1 }); // makes the writer look
  const plain = writer.release(); // joins before the look is answered
  await withData;
  await plain;
  expect((await inner.read('k'))!.record.data).toEqual({ n: 1 });
  expect(await writer.ended).toBe('released');
});
