import { expect, test } from 'vitest';
import type { WriteAnswer, WriterAction, WriterEvent } from '../../src/protocol/writer-events.js';
import { newWriter, type WriterState, type WriterTerms } from '../../src/protocol/writer-state.js';
import { step } from '../../src/protocol/writer-step.js';

// When a holder stops trusting its lease, straight through the pure step function: the margin
// (at least twice the time the confirming write took, up to half the lease), and a suspend the
// monotonic clock missed.

const finite: WriterTerms = { leaseMs: 10_000, claimBy: 'version', marginMs: 1_000, retryMs: 50 };

function run(state: WriterState, ...events: WriterEvent[]) {
  const actions: WriterAction[] = [];
  for (const event of events) {
    const next = step(state, event);
    state = next.state;
    actions.push(...next.actions);
  }
  return { state, actions };
}

const ok = (seq: number, now: number): WriterEvent => {
  const answer: WriteAnswer = { kind: 'ok', version: `v${seq}`, token: 1, top: 1 };
  return { type: 'written', seq, answer, now };
};

test.each([
  [100, 9_000], // a quick write: the margin
  [1_000, 8_000], // twice the write's time
  [3_000, 5_000], // never more than half the lease for that reason
])('a claim answered %i ms after its send is trusted until %i', (answeredAt, deadline) => {
  const { state, actions } = run(newWriter('w', finite), { type: 'start', now: 0 }, ok(1, answeredAt));
  expect(actions).toContainEqual({ type: 'acquired', token: 1 });
  expect(state.lease?.deadline).toBe(deadline);
});

test('a suspend that outlived what was left of a held finite lease ends it at once: the caller hears it is lost', () => {
  const held = run(newWriter('w', finite), { type: 'start', now: 0 }, ok(1, 10)).state; // trusted until 9 000
  const { state, actions } = run(held, { type: 'suspended', ms: 8_000, now: 2_000 });
  expect(actions).toContainEqual({ type: 'lost', why: 'expired' });
  expect(state.end).toBe('lost');
});

test('a shorter suspend moves the deadline that much earlier: the lease holds on until then (sweep seed 603775)', () => {
  const held = run(newWriter('w', finite), { type: 'start', now: 0 }, ok(1, 10)).state;
  const { state, actions } = run(held, { type: 'suspended', ms: 3_000, now: 2_000 });
  expect(actions.some((action) => action.type === 'lost')).toBe(false);
  expect(state.goal.kind).toBe('hold');
  expect(state.lease?.deadline).toBe(6_000);
  expect(actions).toContainEqual({ type: 'arm', timer: 'deadline', at: 6_000 });
  expect(run(state, { type: 'timer', timer: 'deadline', now: 6_000 }).actions).toContainEqual({
    type: 'lost',
    why: 'expired',
  });
});

test('a claim answered after a suspend longer than its lease is not handed out: the writer renews its entry first', () => {
  const claiming = run(newWriter('w', finite), { type: 'start', now: 0 }).state;
  const { state, actions } = run(claiming, { type: 'suspended', ms: 9_500, now: 5 }, ok(1, 10));
  expect(actions.some((action) => action.type === 'acquired')).toBe(false);
  expect(state.goal.kind).toBe('acquire');
  expect(state.pending?.intent.kind).toBe('renew');
  const renewed = run(state, ok(2, 20));
  expect(renewed.actions).toContainEqual({ type: 'acquired', token: 1 });
});

test('a claim answered after a short suspend is trusted for what is left of its lease, counted from its send', () => {
  const claiming = run(newWriter('w', finite), { type: 'start', now: 0 }).state;
  const { state, actions } = run(claiming, { type: 'suspended', ms: 1_000, now: 5 }, ok(1, 10));
  expect(actions).toContainEqual({ type: 'acquired', token: 1 });
  // Sent 1 010 ms before its answer by then: the margin is twice that.
  expect(state.lease?.deadline).toBe(-1_000 + 10_000 - 2_020);
});

test('a fail-closed lease does not run out, suspended or not', () => {
  const failClosed: WriterTerms = { ...finite, leaseMs: null };
  const held = run(newWriter('w', failClosed), { type: 'start', now: 0 }, ok(1, 10)).state;
  const { state, actions } = run(held, { type: 'suspended', ms: 60_000, now: 60_000 });
  expect(actions.some((action) => action.type === 'lost')).toBe(false);
  expect(state.goal.kind).toBe('hold');
  expect(state.lease?.deadline).toBe(Number.POSITIVE_INFINITY);
});

test.each([false, true])('a renewal answered late counts its lease from its send (a slot: %s)', (slot) => {
  const terms: WriterTerms = { ...finite, ...(slot ? { slot: true } : {}) };
  const held = run(newWriter('w', terms), { type: 'start', now: 0 }, ok(1, 10)).state;
  const renewing = run(held, { type: 'timer', timer: 'renew', now: 5_000 }).state; // halfway: 4 500
  expect(renewing.pending?.intent.kind).toBe('renew');
  const { state } = run(renewing, ok(2, 5_400));
  // Sent at 5 000, answered 400 ms later: the margin (1 000) is more than twice that.
  expect(state.lease?.deadline).toBe(5_000 + 10_000 - 1_000);
});
