import {
  answersChange,
  dropChange,
  end,
  giveBackLost,
  isReleaseWrite,
  landed,
  lose,
  notApplied,
  resolveWith,
  send,
} from './write-outcome.js';
import type { Step, TimerName, WriteAnswer, WriterAction, WriterEvent } from './writer-events.js';
import {
  deadlineFrom,
  effectiveDeadline,
  nothingRenews,
  type PendingWrite,
  type RecordView,
  type WriteCondition,
  type WriteIntent,
  type WriterState,
  withFloor,
} from './writer-state.js';

/**
 * The lease protocol of one writer as a pure function: the next state and the actions its
 * driver performs (send a write or a read, arm a timer, answer the caller). No I/O, timers or
 * clocks inside: every event carries the monotonic time it was seen at. The rules:
 * - at most one write in flight: a new write is sent only once the last one's outcome is known;
 * - an unknown outcome is resolved by a read: the write's own id in the record (it landed), the
 *   record still at its condition (it may still land: send it again, unchanged), or the record
 *   moved on without it (it never can);
 * - a deadline change counts once confirmed, except that a shortening counts from its send;
 * - a writer nobody waits for any more gives back whatever it may own, then ends.
 */
export function step(state: WriterState, event: WriterEvent): Step<WriterState> {
  const out: WriterAction[] = [];
  if (state.end !== null) {
    // A hand-over that landed after its waiter left: the lease is this writer's again, to give back.
    if (event.type !== 'handedOver') return { state, actions: [] };
    state = { ...state, end: null, goal: { kind: 'giveBack' } };
  }
  const changed = apply(state, event, out);
  return { state: changed.end === null ? advance(changed, event.now, out) : changed, actions: out };
}

function apply(s: WriterState, e: WriterEvent, out: WriterAction[]): WriterState {
  switch (e.type) {
    case 'start':
      return s;
    case 'written':
      return onWritten(s, e.seq, e.answer, e.now, out);
    case 'read':
      if (s.pending?.seq === e.for && s.pending.status !== 'sent') {
        return resolveWith(s, s.pending, e.view, e.now, out);
      }
      if (e.for !== 0 || !s.reading) return s;
      // A holder's read watches its lease; a waiter's decides its next claim.
      if (s.lease) return watched({ ...s, reading: false, known: withFloor(s, e.view) }, e.view, e.now, out);
      return { ...s, reading: false, known: withFloor(s, e.view) };
    case 'readFailed':
      if (s.pending?.seq === e.for && s.pending.status === 'reading') {
        const told = tellUnknown(s, s.pending, out);
        out.push({ type: 'arm', timer: 'retry', at: e.now + s.terms.retryMs });
        return { ...told, pending: { ...s.pending, status: 'backoff' } };
      }
      if (e.for !== 0 || !s.reading) return s;
      // A holder's failed look proves nothing either way: it looks again `verifyMs` from now.
      if (s.lease) return { ...s, reading: false, lease: { ...s.lease, confirmedAt: e.now } };
      out.push({ type: 'arm', timer: 'retry', at: e.now + s.terms.retryMs });
      return { ...s, reading: false };
    case 'seen': {
      const { lease, known } = s;
      if (!lease) return s;
      // A holder with nothing in flight, whose entry the record shows as its last write left it,
      // builds its next write on it.
      if (!s.pending && !s.reading && e.view.version !== null && e.view.own?.seq === s.seq) {
        return { ...s, lease: { ...lease, version: e.view.version }, known: withFloor(s, e.view) };
      }
      // Otherwise it learns only the token: one above its lease's reserve means someone took the
      // key (an early takeover), and it passes nothing on without a write, which learns the loss.
      return known && e.view.token > known.token ? { ...s, known: { ...known, token: e.view.token } } : s;
    }
    case 'timer':
      return onTimer(s, e.timer, e.now, out);
    case 'release':
      // Asked again (told the first one's outcome was unknown): the same release, with this data;
      // a call with none (close's retry) keeps the data a caller still waits to see stored.
      if (s.goal.kind === 'release') return { ...s, goal: { ...s.goal, data: e.data ?? s.goal.data } };
      if (s.goal.kind !== 'hold') return s;
      dropChange(s, out);
      if (e.holdMs === undefined || !s.lease) return { ...s, goal: { kind: 'release', data: e.data } };
      return { ...s, goal: { kind: 'release', data: e.data, holdUntil: e.now + e.holdMs } };
    case 'handOver':
      if (s.goal.kind !== 'hold') return s;
      dropChange(s, out);
      return { ...s, goal: { kind: 'handOver', to: e.to, leaseMs: e.leaseMs, data: e.data } };
    case 'extend':
      return s.goal.kind === 'hold' && s.goal.change === undefined
        ? { ...s, goal: { kind: 'hold', change: { leaseMs: e.leaseMs, data: e.data } } }
        : s;
    case 'pass': {
      const token = passToken(s, e.leaseMs, e.now);
      if (token === undefined || !s.lease) {
        out.push({ type: 'notPassed' });
        return s;
      }
      out.push({ type: 'passed', token });
      return { ...s, lease: { ...s.lease, token } };
    }
    case 'suspended': {
      // `ms` more passed than the monotonic clock counted: what was dated before the suspend is
      // dated that much earlier. A finite lease ends that much sooner (at once when that is past:
      // checkDeadline; a fail-closed one never runs out), and a write in flight counts from that
      // much earlier (its answer trusts only what is left of the lease it asked for).
      const lease = s.lease && {
        ...s.lease,
        deadline: s.lease.deadline - e.ms,
        confirmedAt: s.lease.confirmedAt - e.ms,
      };
      const pending = s.pending && { ...s.pending, sentAt: s.pending.sentAt - e.ms };
      return { ...s, lease, pending };
    }
    case 'forceReleased': {
      const lease = s.lease && { ...s.lease, deadline: Math.min(s.lease.deadline, e.now) };
      return { ...s, lease, pending: s.pending && distrust(s.pending) };
    }
    case 'giveUp':
      if (s.goal.kind !== 'acquire' && s.goal.kind !== 'hold') return s;
      dropChange(s, out);
      return { ...s, goal: { kind: 'giveBack' } };
    case 'resume': {
      if (s.goal.kind !== 'acquire' || s.seq > 0 || s.known !== undefined) return s;
      const own = { seq: 0, token: e.token };
      const token = Math.max(e.top, e.floor ?? 0);
      const known = { version: e.version, token, lastSeq: undefined, own, claimable: false };
      // Never trusted as it stands: seekLease renews the entry first (an own entry, no lease).
      return {
        ...s,
        terms: { ...s.terms, leaseMs: e.leaseMs },
        known,
        goal: { kind: 'acquire', resuming: true },
      };
    }
    case 'handedOver': {
      if (s.lease || (s.goal.kind !== 'acquire' && s.goal.kind !== 'giveBack')) return s;
      // Dated by the lease the hand-over wrote, which may differ from this writer's terms.
      const deadline = deadlineFrom(e.sentAt, e.leaseMs, s.terms.marginMs, e.now - e.sentAt);
      const own = { seq: 0, token: e.token };
      const known = { version: e.version, token: e.top, lastSeq: undefined, own, claimable: false };
      const terms = { ...s.terms, leaseMs: e.leaseMs };
      const lease = { version: e.version, token: e.token, top: e.top, deadline, confirmedAt: e.sentAt };
      // A look of its own still on its way shows the record before the hand-over: it is dropped.
      const handed = { ...s, terms, known, lease, reading: false };
      if (s.goal.kind === 'giveBack') return handed;
      // Too late to trust, or not to be trusted at all: renewed first.
      if (e.now >= deadline || e.distrusted) return { ...handed, lease: null };
      out.push({ type: 'acquired', token: e.token });
      // Its deadline is armed now: a claim of its own still on its way holds back the rest of
      // the timers until it is answered, and the lease may end before that.
      const due = effectiveDeadline(handed);
      if (Number.isFinite(due)) out.push({ type: 'arm', timer: 'deadline', at: due });
      return { ...handed, goal: { kind: 'hold' } };
    }
  }
}

function onWritten(
  s: WriterState,
  seq: number,
  answer: WriteAnswer,
  now: number,
  out: WriterAction[],
): WriterState {
  const pending = s.pending;
  if (pending === null || pending.seq !== seq) return s; // an answer to a write already resolved
  switch (answer.kind) {
    case 'ok':
      return landed(s, pending, answer.version, answer.token, answer.top, now, out);
    case 'conflict':
      if (answer.view) return resolveWith(s, pending, answer.view, now, out);
      return pending.status === 'sent' ? { ...s, pending: { ...pending, status: 'unknown' } } : s;
    case 'refused': {
      // A refusal proves nothing about another copy of it whose outcome was unknown: read
      // again, after the retry time (a store that refuses writes but answers reads is not met
      // with a loop of reads and copies).
      if (pending.mayHaveLanded) {
        if (pending.status !== 'sent') return s;
        const told = tellUnknown(s, pending, out);
        out.push({ type: 'arm', timer: 'retry', at: now + s.terms.retryMs });
        return { ...told, pending: { ...pending, status: 'backoff' } };
      }
      // A claim, or a giving back that nobody waits for, is tried again only after the retry
      // time, on what a read then shows: an outage or throttling is not met with a tight loop.
      const claiming = pending.intent.kind === 'claim' && s.goal.kind === 'acquire';
      if (claiming || (pending.intent.kind !== 'claim' && s.goal.kind === 'giveBack')) {
        out.push({ type: 'arm', timer: 'retry', at: now + s.terms.retryMs });
        return { ...s, pending: { ...pending, status: 'refused' } };
      }
      return notApplied(s, pending, undefined, out);
    }
    case 'unknown': {
      if (pending.status !== 'sent') return s;
      // A copy sent again came back unknown too: the next read waits the retry time.
      if (pending.mayHaveLanded) {
        const told = tellUnknown(s, pending, out);
        out.push({ type: 'arm', timer: 'retry', at: now + s.terms.retryMs });
        return { ...told, pending: { ...pending, status: 'backoff' } };
      }
      // The read that follows resolves it; a caller of a release or hand-over hears that its
      // outcome is unknown only if that read fails (tellUnknown).
      return { ...s, pending: { ...pending, status: 'unknown', mayHaveLanded: true } };
    }
  }
}

function onTimer(s: WriterState, timer: TimerName, now: number, out: WriterAction[]): WriterState {
  if (timer === 'retry') {
    if (s.pending?.status === 'backoff') return { ...s, pending: { ...s.pending, status: 'unknown' } };
    if (s.pending?.status === 'refused') return notApplied(s, s.pending, undefined, out);
    if (s.goal.kind !== 'acquire' || s.lease || s.pending || s.reading) return s;
    out.push({ type: 'read', for: 0 });
    return { ...s, reading: true };
  }
  if (timer === 'verify') {
    if (s.goal.kind !== 'hold' || !s.lease || s.pending || s.reading || !nothingRenews(s.terms)) return s;
    out.push({ type: 'read', for: 0 });
    return { ...s, reading: true };
  }
  if (
    timer === 'renew' &&
    s.goal.kind === 'hold' &&
    s.lease &&
    !s.pending &&
    !s.reading &&
    !nothingRenews(s.terms)
  ) {
    if (now < renewAt(s)) return s;
    const intent = { kind: 'renew', leaseMs: s.terms.leaseMs, token: s.lease.token } as const;
    return send(s, intent, versionOf(s.lease.version), now, out);
  }
  return s; // the deadline is checked by advance() on every event
}

/** What the writer does next, once an event has been applied. */
function advance(state: WriterState, now: number, out: WriterAction[]): WriterState {
  const s = checkDeadline(state, now, out);
  if (s.end !== null) return s;
  const pending = s.pending;
  if (pending) {
    if (pending.status !== 'unknown') return s;
    out.push({ type: 'read', for: pending.seq });
    return { ...s, pending: { ...pending, status: 'reading' } };
  }
  if (s.reading) return s;
  const { goal, lease, known } = s;
  const ownVersion = known?.own !== undefined ? known.version : null;
  switch (goal.kind) {
    case 'acquire':
      return seekLease(s, now, out);
    case 'hold':
      if (!lease) return s;
      if (goal.change !== undefined) {
        // Sent as a write of its own, whose seq marks it: only that write answers the change.
        const { leaseMs, data } = goal.change;
        const intent = { kind: 'renew', leaseMs, token: lease.token, data } as const;
        const sent = send(s, intent, versionOf(lease.version), now, out);
        return { ...sent, goal: { kind: 'hold', change: { ...goal.change, seq: sent.seq } } };
      }
      return arm(s, now, out);
    case 'release':
    case 'handOver': {
      const version = lease?.version ?? ownVersion;
      if (version === null) return lose(s, out, false);
      if (goal.kind === 'release') {
        const holdMs = goal.holdUntil === undefined ? 0 : goal.holdUntil - now;
        const intent: WriteIntent =
          holdMs <= 0
            ? { kind: 'release', data: goal.data }
            : { kind: 'renew', leaseMs: holdMs, token: lease?.token ?? 0, data: goal.data };
        const sent = send(s, intent, versionOf(version), now, out);
        return { ...sent, goal: { ...goal, sent: sent.seq } };
      }
      const token = Math.max(lease?.token ?? 0, known?.token ?? 0) + 1;
      const intent = {
        kind: 'handOver',
        to: goal.to,
        token,
        leaseMs: goal.leaseMs,
        data: goal.data,
      } as const;
      return send(s, intent, versionOf(version), now, out);
    }
    case 'giveBack': {
      const version = lease?.version ?? ownVersion;
      if (version === null) return end(s, 'gaveUp', out);
      return send(s, { kind: 'release', data: undefined }, versionOf(version), now, out);
    }
  }
}

/** Waiting for the key with nothing in flight: renew an own untrusted lease, claim, or wait. */
function seekLease(s: WriterState, now: number, out: WriterAction[]): WriterState {
  const { known, terms } = s;
  if (known?.own !== undefined && known.version !== null) {
    const intent = { kind: 'renew', leaseMs: terms.leaseMs, token: known.own.token } as const;
    return send(s, intent, versionOf(known.version), now, out);
  }
  // A resume whose entry is no longer its own to renew: the acquisition ended elsewhere.
  if (s.goal.kind === 'acquire' && s.goal.resuming) return end(s, 'lost', out);
  if (known !== undefined && !known.claimable) {
    out.push({ type: 'arm', timer: 'retry', at: now + terms.retryMs });
    return s;
  }
  // Never seen (a fresh key is the common case: create it), or claimable as last seen.
  const version = known?.version ?? null;
  // A record created again below the token floor: only a write by version goes on above it.
  const byState = version === null || !known?.belowFloor;
  if (terms.claimBy === 'state' && terms.leaseMs !== null && byState) {
    return send(
      s,
      { kind: 'claim', token: undefined, tokenFloor: known?.token ?? 0 },
      { kind: 'claimable', version },
      now,
      out,
    );
  }
  const condition: WriteCondition = version === null ? { kind: 'absent' } : versionOf(version);
  return send(s, { kind: 'claim', token: (known?.token ?? 0) + 1 }, condition, now, out);
}

/**
 * A release, hand-over or change whose outcome is unknown, and the read that would resolve it
 * failed: its caller hears so now instead of waiting out an outage (a releasing caller no
 * longer holds the key as far as it can tell); the writer goes on resolving it. A change told
 * so is the caller's no more: should it land, it counts as a renewal.
 */
function tellUnknown(s: WriterState, pending: PendingWrite, out: WriterAction[]): WriterState {
  const { goal } = s;
  const callers = pending.intent.kind === 'release' || pending.intent.kind === 'handOver';
  if ((goal.kind === 'release' || goal.kind === 'handOver') && (callers || isReleaseWrite(s, pending))) {
    out.push({ type: 'failed', op: goal.kind, why: 'unknown', maybeApplied: true });
  }
  if (answersChange(s, pending)) {
    out.push({ type: 'failed', op: 'extend', why: 'unknown', maybeApplied: true });
    return { ...s, goal: { kind: 'hold' } };
  }
  return s;
}

function distrust(pending: PendingWrite): PendingWrite {
  return { ...pending, distrusted: true };
}

/** The lease is no longer trusted once its deadline passed: the caller hears so at once. */
function checkDeadline(s: WriterState, now: number, out: WriterAction[]): WriterState {
  if (!s.lease || now < effectiveDeadline(s)) return s;
  const { goal, pending } = s;
  // A release or hand-over in flight goes on: its outcome tells the caller whether it landed.
  const writing =
    pending?.intent.kind === 'release' || pending?.intent.kind === 'handOver' || isReleaseWrite(s, pending);
  if ((goal.kind === 'release' || goal.kind === 'handOver') && writing) return s;
  if (goal.kind === 'hold') out.push({ type: 'lost', why: 'expired' });
  if (goal.kind === 'hold' && goal.change) {
    // The caller's change may still land when its write is the one in flight.
    const maybeApplied = answersChange(s, pending);
    out.push({ type: 'failed', op: 'extend', why: 'lost', maybeApplied });
  }
  if (goal.kind === 'release' || goal.kind === 'handOver') {
    out.push({ type: 'failed', op: goal.kind, why: 'lost', maybeApplied: false });
  }
  // A write in flight may still land, or be refused and leave the lease as it was (a refused
  // shortening of a fail-closed lease): the lease stays known, to be given back.
  if (pending) return goal.kind === 'giveBack' ? s : { ...s, goal: { kind: 'giveBack' } };
  // Giving back a lease that ran out meanwhile (a write of it landed late): its entry is still
  // released, conditional on the version it left, so that nobody waits out its lease.
  if (goal.kind === 'giveBack') return { ...s, lease: null };
  return end(s, 'lost', out);
}

/**
 * The token a local pass gives the next caller, or undefined when it must hand over with a write:
 * a plain lock held with nothing in flight or asked for, a reserved token left and no token seen
 * above the reserve (another client took the key early), the same lease length, and at least a
 * third of the lease left (the next caller must not start with almost none).
 */
function passToken(s: WriterState, leaseMs: number | null, now: number): number | undefined {
  const { lease, goal, terms, pending } = s;
  if (!lease || goal.kind !== 'hold' || goal.change !== undefined || pending || s.reading) return undefined;
  if (terms.slot || terms.leaseMs === null || leaseMs !== terms.leaseMs) return undefined;
  if (lease.token >= lease.top || (s.known?.token ?? 0) > lease.top) return undefined;
  if (effectiveDeadline(s) - now <= terms.leaseMs / 3) return undefined;
  return lease.token + 1;
}

function arm(s: WriterState, now: number, out: WriterAction[]): WriterState {
  const deadline = effectiveDeadline(s);
  if (Number.isFinite(deadline)) out.push({ type: 'arm', timer: 'deadline', at: deadline });
  const { terms, lease } = s;
  if (nothingRenews(terms)) {
    // Nothing renews the lease: look at the record now and then, counted from its last confirmation.
    if (terms.verifyMs !== undefined && lease) {
      out.push({ type: 'arm', timer: 'verify', at: Math.max(now, lease.confirmedAt + terms.verifyMs) });
    }
    return s;
  }
  // A heartbeat the store refused left the renewal due: the next one waits the retry time.
  const due = renewAt(s);
  out.push({ type: 'arm', timer: 'renew', at: due > now ? due : now + terms.retryMs });
  return s;
}

/** When a held lease is renewed: after the caller's interval, or halfway through what is left of it. */
function renewAt(s: WriterState): number {
  const { renewEveryMs, marginMs } = s.terms;
  const leaseMs = s.terms.leaseMs ?? Number.POSITIVE_INFINITY;
  const halfway = (s.lease?.deadline ?? 0) - (leaseMs - marginMs) / 2;
  if (typeof renewEveryMs !== 'number') return halfway;
  return (s.lease?.confirmedAt ?? 0) + renewEveryMs;
}

/**
 * What a holder's read of the record says about its lease: still its own (at the same version, or
 * beside other holders' writes to a semaphore), or taken away (freed or claimed by someone else).
 */
function watched(s: WriterState, view: RecordView, now: number, out: WriterAction[]): WriterState {
  const { lease } = s;
  if (!lease) return s;
  // Beside other holders' writes, a slot's entry as it left it; a lock's record, only unchanged.
  const beside = view.version !== null && view.own !== undefined && s.terms.slot === true;
  if (view.version === lease.version || beside) {
    return { ...s, lease: { ...lease, version: view.version ?? lease.version, confirmedAt: now } };
  }
  // A lock's own entry at another version: a late copy of its one-request claim, to give back.
  if (view.own !== undefined) return giveBackLost({ ...s, known: withFloor(s, view) }, out, false);
  // Nothing of this writer was in flight (a read waits for its write): nothing of it can land.
  return lose(s, out, false);
}

function versionOf(version: string): WriteCondition {
  return { kind: 'version', version };
}
