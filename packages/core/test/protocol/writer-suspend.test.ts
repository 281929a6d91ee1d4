import { expect, test } from 'vitest';
import { LockLostError } from '../../src/shared/errors.js';
import type { Scheduler } from '../../src/shared/scheduler.js';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// A suspend the monotonic clock missed (a laptop lid, a VM paused by its host), as a writer's
// driver sees it: the wall clock jumps ahead while the monotonic clock stood still.

/** Manual time whose wall clock can be moved on alone, as a suspend does. */
function suspendable() {
  const time = new ManualTime();
  const base = time.scheduler();
  const wall = { extraMs: 0 };
  const scheduler: Scheduler = { ...base, now: () => base.now() + wall.extraMs };
  const suspend = (ms: number) => {
    wall.extraMs += ms;
  };
  return { time, scheduler, suspend };
}

test('a holder suspended past its lease hears it is lost at its next timer, before any write', async () => {
  const { time, scheduler, suspend } = suspendable();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1, { scheduler });
  void writer.acquire();
  await time.advance(1);
  const sent = state.sent.length;
  suspend(60_000);
  await time.advance(4_600); // the renewal timer fires: the clocks disagree by a minute
  expect(writer.signal.aborted).toBe(true);
  expect(writer.signal.reason).toBeInstanceOf(LockLostError);
  expect(state.sent.length).toBe(sent); // no renewal went out on a lease that may be someone else's
});

test('a clock that drifts a little is not a suspend', async () => {
  const { time, scheduler, suspend } = suspendable();
  const { store } = watchedStore();
  const writer = writerOn(store, time, 1, { scheduler });
  void writer.acquire();
  await time.advance(1);
  const deadline = writer.state.lease!.deadline;
  suspend(400); // below the slack (a twentieth of the lease, at most 1 s)
  writer.check();
  expect(writer.state.lease!.deadline).toBe(deadline);
  await time.advance(4_600);
  expect(writer.signal.aborted).toBe(false);
  expect(writer.state.lease).not.toBeNull();
  await writer.release();
});

test('a claim answered after a suspend is renewed before the caller gets it', async () => {
  const { time, scheduler, suspend } = suspendable();
  const { store, state, releaseWrites } = watchedStore();
  const writer = writerOn(store, time, 1, { scheduler });
  state.holdWrites = true;
  let acquired = false;
  void writer.acquire().then(() => {
    acquired = true;
  });
  await time.advance(1);
  suspend(60_000); // the claim's answer arrives after the machine woke up
  releaseWrites();
  await time.advance(1);
  expect(acquired).toBe(true);
  // The claim, stamped before the suspend, then the renewal that confirmed the lease after it.
  const [claim, renewal] = state.sent;
  expect(state.sent).toHaveLength(2);
  expect(renewal!.holder!.renewedAt - claim!.holder!.renewedAt).toBe(60_001);
});

test('the wall clock moving on a twentieth of the lease more than the monotonic one counts as a suspend: the deadline comes that much sooner', async () => {
  const { time, scheduler, suspend } = suspendable();
  const { store } = watchedStore();
  const writer = writerOn(store, time, 1, { scheduler });
  void writer.acquire();
  await time.advance(1);
  const deadline = writer.state.lease!.deadline;
  suspend(600); // 10 s lease: 500 ms of slack
  writer.check();
  expect(writer.state.lease!.deadline).toBe(deadline - 600);
  expect(writer.signal.aborted).toBe(false); // far from its end yet
  suspend(400); // counted from the last look: below the slack again
  writer.check();
  expect(writer.state.lease!.deadline).toBe(deadline - 600);
  await writer.release();
});

test('a fail-closed holder suspended while its extend to a finite lease is on its way is lost at its next look', async () => {
  const { time, scheduler, suspend } = suspendable();
  const { store, state, releaseWrites } = watchedStore();
  const writer = writerOn(store, time, 1, { scheduler, terms: { leaseMs: null, verifyMs: 100_000 } });
  void writer.acquire();
  await time.advance(1);
  state.holdWrites = true;
  const extending = writer.extend(5_000).catch((error: unknown) => error); // may land, making the lease finite
  await time.advance(1);
  suspend(60_000); // long past the 5 s the record may now say
  writer.check(); // what a lock's isHeld does
  expect(writer.signal.aborted).toBe(true);
  releaseWrites();
  await time.advance(1);
  await extending;
});
