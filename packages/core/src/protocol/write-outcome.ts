import type { WriterAction } from './writer-events.js';
import {
  deadlineFrom,
  effectiveDeadline,
  type PendingWrite,
  type RecordView,
  termsRenewedFor,
  type WriterEnd,
  type WriterState,
  withFloor,
} from './writer-state.js';

// What the outcome of the writer's one write means: it landed, it certainly did not, or a
// record read after it says which. Each function leaves nothing in flight; advance() in
// writer-step.ts then decides the next write.

/** The write `pending` landed: at `version`, with `token` as the writer's token and `top` as the record's. */
export function landed(
  state: WriterState,
  pending: PendingWrite,
  version: string,
  token: number,
  top: number,
  now: number,
  out: WriterAction[],
): WriterState {
  const { intent } = pending;
  const holds = intent.kind === 'claim' || intent.kind === 'renew';
  const leaseToken = intent.kind === 'claim' || !state.lease ? token : state.lease.token;
  let s: WriterState = {
    ...state,
    pending: null,
    known: {
      version,
      token: Math.max(top, state.known?.token ?? 0),
      lastSeq: pending.seq,
      own: holds ? { seq: pending.seq, token: leaseToken } : undefined,
      claimable: !holds && intent.kind === 'release',
    },
  };
  if (intent.kind === 'renew' && isReleaseWrite(state, pending) && state.goal.kind === 'release') {
    // A release that keeps the lease a while: shortened, it now runs out by itself.
    const { goal } = state;
    if (goal.data !== undefined && goal.data !== intent.data) {
      // Asked again with other data: stored by one more write on the lease as it now stands,
      // which is the shortened one (trusted no longer than it).
      const deadline = deadlineFrom(pending.sentAt, intent.leaseMs, s.terms.marginMs, now - pending.sentAt);
      const top = s.known?.token ?? token;
      const lease = { version, token: leaseToken, top, deadline, confirmedAt: pending.sentAt };
      const sent = sendNow({ ...s, lease }, { ...intent, data: goal.data }, version, now, out);
      return { ...sent, goal: { ...goal, sent: sent.seq } };
    }
    out.push({ type: 'released' });
    return end(s, 'released', out);
  }
  if (intent.kind === 'claim' || intent.kind === 'renew') {
    const leaseMs = intent.kind === 'renew' ? intent.leaseMs : s.terms.leaseMs;
    const deadline = pending.distrusted
      ? Number.NEGATIVE_INFINITY
      : deadlineFrom(pending.sentAt, leaseMs, s.terms.marginMs, now - pending.sentAt);
    const lease = { version, token: leaseToken, top, deadline, confirmedAt: pending.sentAt };
    // The caller's extend (or update) answered: a fail-closed lease made finite renews from now on.
    const terms = answersChange(s, pending) ? termsRenewedFor(s.terms, leaseMs) : { ...s.terms, leaseMs };
    s = { ...s, terms, lease };
    if (s.goal.kind === 'acquire') {
      // A lease that arrived too late is not trusted: it stays the writer's (own), and the next
      // write renews it before it is handed out.
      if (now >= deadline) return { ...s, lease: null };
      out.push({ type: 'acquired', token: leaseToken });
      return { ...s, goal: { kind: 'hold' } };
    }
    if (answersChange(s, pending)) {
      out.push({ type: 'extended' });
      return { ...s, goal: { kind: 'hold' } };
    }
    if (s.goal.kind === 'hold') out.push({ type: 'renewed' });
    return s;
  }
  if (intent.kind === 'release') {
    // The caller asked again since, for other data (told that this one's outcome was unknown):
    // nobody wrote after this write, so the record is still this writer's to write.
    if (s.goal.kind === 'release' && s.goal.data !== undefined && s.goal.data !== intent.data) {
      // The key is free from here on: the writer holds no lease (a refusal of this write must
      // not put it back to holding).
      return sendNow({ ...s, lease: null }, { kind: 'release', data: s.goal.data }, version, now, out);
    }
    if (s.goal.kind === 'release') out.push({ type: 'released' });
    return end(s, 'released', out);
  }
  out.push({ type: 'released' });
  out.push({
    type: 'passTo',
    to: intent.to,
    version,
    token: intent.token,
    top,
    leaseMs: intent.leaseMs,
    sentAt: pending.sentAt,
    // It overlapped a forceRelease of this client, or a suspend: the waiter renews it first.
    ...(pending.distrusted ? { distrusted: true as const } : {}),
  });
  return end(s, 'handedOver', out);
}

/** The write `pending` did not land, and cannot any more: the store refused it (no `view`), or the record moved on without it. */
export function notApplied(
  state: WriterState,
  pending: PendingWrite,
  view: RecordView | undefined,
  out: WriterAction[],
): WriterState {
  const s: WriterState = { ...state, pending: null, known: view ? withFloor(state, view) : state.known };
  const { intent, condition } = pending;
  if (intent.kind === 'claim') {
    // A one-request claim refused on the very version it was sent for, though this client
    // judged it claimable: the store judged otherwise. Not again at once: after the retry time.
    const judgedOtherwise = condition.kind === 'claimable' && view?.version === condition.version;
    return judgedOtherwise && s.known ? { ...s, known: { ...s.known, claimable: false } } : s;
  }
  if (view && s.goal.kind === 'acquire' && s.goal.resuming && !s.lease) {
    // A takeover's renewal met a record that moved on. The acquisition's entry may still be in it
    // (its old process renewed it, a semaphore's other holders wrote): the next step renews it on
    // the new version; without it, the acquisition ended elsewhere (seekLease).
    return s;
  }
  const ownVersion = view?.own !== undefined ? view.version : null;
  if (ownVersion !== null && !s.terms.slot) {
    // A lock's own entry at a version none of its writes in flight left: a late copy of its
    // one-request claim landed once the record had moved on without it. The lease it held is
    // gone (a caller's write may have landed before that); that entry is its own to give back.
    const callers = intent.kind !== 'renew' || answersChange(s, pending) || isReleaseWrite(s, pending);
    return giveBackLost(s, out, callers && pending.mayHaveLanded);
  }
  if (ownVersion !== null) {
    // Still this writer's entry (a semaphore slot others wrote beside): write again on the new
    // version (a change, too: it is sent again as a write of its own).
    const again = answersChange(s, pending) ? resendChange(s) : s;
    return again.lease ? { ...again, lease: { ...again.lease, version: ownVersion } } : again;
  }
  const releasing = isReleaseWrite(s, pending);
  const op = releasing ? 'release' : intent.kind === 'renew' ? 'extend' : intent.kind;
  if (!view) {
    // Certainly not applied: the lease stands as it was (a shortened deadline rolls back),
    // unless its deadline passed while the write was in flight.
    if (!s.lease) {
      // A waiting caller's renewal of its own untrusted lease was refused: look again later
      // (the retry's read finds the entry, if it is still there) instead of failing the wait.
      if (s.goal.kind === 'acquire')
        return { ...s, known: s.known && { ...s.known, own: undefined, claimable: false } };
      // Giving back a record of its own that it never trusted: still its own, so it tries again.
      if (s.goal.kind === 'giveBack' && intent.kind === 'release') return s;
      return lose(s, out, false);
    }
    // A heartbeat refused: the lease stands, and the caller's change, if any, is sent next.
    if (intent.kind === 'renew' && !answersChange(s, pending) && !releasing) return s;
    out.push({ type: 'failed', op, why: 'refused', maybeApplied: false });
    return s.goal.kind === 'giveBack' ? s : { ...s, goal: { kind: 'hold' } };
  }
  // A renewal of an untrusted lease of its own failed: claim afresh (a resume ends: seekLease).
  if (s.goal.kind === 'acquire') return s;
  // Moved on without it: a copy of a release, hand-over or change may have landed before.
  const callers = intent.kind !== 'renew' || answersChange(s, pending) || releasing;
  return lose(s, out, callers && pending.mayHaveLanded);
}

/** What a record read after the write `pending` (or returned with its refusal) says about it. */
export function resolveWith(
  state: WriterState,
  pending: PendingWrite,
  view: RecordView,
  now: number,
  out: WriterAction[],
): WriterState {
  if (view.version !== null && (view.lastSeq === pending.seq || view.own?.seq === pending.seq)) {
    return landed(state, pending, view.version, view.own?.token ?? view.token, view.token, now, out);
  }
  const { condition } = pending;
  const unchanged =
    condition.kind === 'absent'
      ? view.version === null
      : condition.kind === 'version' && view.version === condition.version;
  if (unchanged && pending.mayHaveLanded) {
    // Its condition still holds, so a copy of it may still land: send it again, unchanged. Of
    // the copies, at most one lands (each needs this version), and none once another write has.
    out.push({ type: 'write', seq: pending.seq, intent: pending.intent, condition });
    return { ...state, known: withFloor(state, view), pending: { ...pending, status: 'sent' } };
  }
  // The record moved on without it (or it was a one-request claim, which no read can rule out:
  // a copy that lands later is recognised by its seq, and its finite lease ends by itself).
  return notApplied(state, pending, view, out);
}

/** Whether `write` is the one sent for the change the holder's caller waits for (a heartbeat is not). */
export function answersChange(state: WriterState, write: PendingWrite | null): boolean {
  const { goal } = state;
  return goal.kind === 'hold' && write !== null && goal.change?.seq === write.seq;
}

/** Whether `write` is the one sent for the caller's release (a heartbeat before it is not). */
export function isReleaseWrite(state: WriterState, write: PendingWrite | null): boolean {
  const { goal } = state;
  return goal.kind === 'release' && write !== null && goal.sent === write.seq;
}

/** The holder's change, to be sent again as a new write. */
function resendChange(state: WriterState): WriterState {
  const { goal } = state;
  if (goal.kind !== 'hold' || !goal.change) return state;
  const { seq: _seq, ...change } = goal.change;
  return { ...state, goal: { kind: 'hold', change } };
}

/**
 * The caller's change is answered as lost when something else ends the holding (a release, a
 * hand-over, close): it may have landed if its write is the one still in flight.
 */
export function dropChange(state: WriterState, out: WriterAction[]): void {
  const { goal } = state;
  if (goal.kind !== 'hold' || !goal.change) return;
  const maybeApplied = answersChange(state, state.pending);
  out.push({ type: 'failed', op: 'extend', why: 'lost', maybeApplied });
}

/** The caller's lease is gone, and nothing of this writer is left in the store or in flight. */
export function lose(state: WriterState, out: WriterAction[], maybeApplied: boolean): WriterState {
  return end(giveBackLost(state, out, maybeApplied), 'lost', out);
}

/** Like `lose`, but an entry of the writer is still in the record: it is given back before the writer ends. */
export function giveBackLost(state: WriterState, out: WriterAction[], maybeApplied: boolean): WriterState {
  const { goal } = state;
  if (goal.kind === 'hold') out.push({ type: 'lost', why: 'taken' });
  if (goal.kind === 'hold' && goal.change) {
    out.push({ type: 'failed', op: 'extend', why: 'lost', maybeApplied });
  }
  if (goal.kind === 'release' || goal.kind === 'handOver') {
    out.push({ type: 'failed', op: goal.kind, why: 'lost', maybeApplied });
  }
  return { ...state, lease: null, goal: { kind: 'giveBack' } };
}

export function end(state: WriterState, how: WriterEnd, out: WriterAction[]): WriterState {
  out.push({ type: 'ended', end: how });
  return { ...state, lease: null, pending: null, reading: false, end: how };
}

/** Sends the writer's next write (nothing may be in flight). */
export function send(
  state: WriterState,
  intent: PendingWrite['intent'],
  condition: PendingWrite['condition'],
  now: number,
  out: WriterAction[],
): WriterState {
  const seq = state.seq + 1;
  out.push({ type: 'write', seq, intent, condition });
  const pending: PendingWrite = { seq, intent, condition, sentAt: now, status: 'sent', mayHaveLanded: false };
  const sent = { ...state, seq, pending };
  // The deadline the holder goes by while this write is on its way (a landing just before may
  // have moved it, and a shortening counts from now): its timer is set to it.
  const deadline = sent.lease ? effectiveDeadline(sent) : Number.POSITIVE_INFINITY;
  if (Number.isFinite(deadline)) out.push({ type: 'arm', timer: 'deadline', at: deadline });
  return sent;
}

function sendNow(
  state: WriterState,
  intent: PendingWrite['intent'],
  version: string,
  now: number,
  out: WriterAction[],
): WriterState {
  return send(state, intent, { kind: 'version', version }, now, out);
}
