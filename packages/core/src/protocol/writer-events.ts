import type { Data, RecordView, WriteCondition, WriteIntent, WriterEnd } from './writer-state.js';

// What happens to a writer (events) and what it asks its driver to do (actions). Every event
// carries the monotonic time it was seen at: the step function reads no clock of its own.

/** How the store answered one write. */
export type WriteAnswer =
  /** Applied: `token` is this writer's in the written record, `top` the record's own (the highest). */
  | { readonly kind: 'ok'; readonly version: string; readonly token: number; readonly top: number }
  /** Not applied: the condition failed. `view` is the record now, when the store returned it. */
  | { readonly kind: 'conflict'; readonly view?: RecordView }
  /** Certainly not applied: refused before it could be (connection refused, throttled, invalid). */
  | { readonly kind: 'refused' }
  /** No answer, or one that cannot tell: it may have been applied, or may still be. */
  | { readonly kind: 'unknown' };

export type TimerName = 'retry' | 'renew' | 'deadline' | 'verify';

export type WriterEvent =
  /** The caller starts waiting for the key (the writer sends its first request). */
  | { readonly type: 'start'; readonly now: number }
  | { readonly type: 'written'; readonly seq: number; readonly answer: WriteAnswer; readonly now: number }
  /** A read answered; `for` is the write it resolves (its seq), or 0 for a read before a claim or one that watches a lease. */
  | { readonly type: 'read'; readonly for: number; readonly view: RecordView; readonly now: number }
  | { readonly type: 'readFailed'; readonly for: number; readonly now: number }
  /**
   * Its client saw the record otherwise (another writer of it wrote it, a semaphore's other
   * slot; or it read it): a holder's next write may build on it when it shows the holder's entry
   * as its own last write left it; otherwise the holder learns its token.
   */
  | { readonly type: 'seen'; readonly view: RecordView; readonly now: number }
  | { readonly type: 'timer'; readonly timer: TimerName; readonly now: number }
  /** The holder releases, storing `data`; with `holdMs`, by shortening its lease to that and letting it run out. */
  | { readonly type: 'release'; readonly data: Data; readonly holdMs?: number; readonly now: number }
  /** The holder releases straight to the local waiter `to`. */
  /** `leaseMs`: the lease the waiter `to` takes (its terms'): the hand-over writes it, and `to` dates its lease by it. */
  | {
      readonly type: 'handOver';
      readonly to: string;
      readonly leaseMs: number | null;
      readonly data: Data;
      readonly now: number;
    }
  /**
   * The holder's caller is done and another caller of this client, asking for a lease of
   * `leaseMs`, takes the lease with no write: on the next reserved token, if the pass is safe.
   */
  | { readonly type: 'pass'; readonly leaseMs: number | null; readonly now: number }
  /**
   * The holder asks to renew now: for a lease of `leaseMs` (another length: extend; its own:
   * update), storing `data` when given. One at a time: a second waits for the first's answer.
   */
  | { readonly type: 'extend'; readonly leaseMs: number | null; readonly data: Data; readonly now: number }
  /**
   * The wall clock moved `ms` further than the monotonic one (which stands still while the
   * machine is suspended): that much more time passed than the writer counted, so its lease
   * ends that much sooner (at once, when that is past), and a write sent before counts from that
   * much earlier.
   */
  | { readonly type: 'suspended'; readonly ms: number; readonly now: number }
  /**
   * A forceRelease of this client frees the key: a lease of this writer ends at once (fail-closed
   * too), and a write of it in flight, which may have landed before the force, confirms nothing.
   */
  | { readonly type: 'forceReleased'; readonly now: number }
  /** The caller stopped waiting (its wait ran out, it aborted, or the client closes). */
  | { readonly type: 'giveUp'; readonly now: number }
  /**
   * The caller takes over an acquisition made elsewhere (by its handle): the record at `version`
   * holds its entry, on `token`, for a lease of `leaseMs`. The writer renews that entry before
   * the caller gets it (its old process may still write), and ends if the renewal does not land.
   */
  | {
      readonly type: 'resume';
      readonly version: string;
      readonly token: number;
      readonly top: number;
      readonly leaseMs: number | null;
      /** The highest token its client saw for the key (the record may have been deleted since): none below it is handed on. */
      readonly floor?: number;
      readonly now: number;
    }
  /** A lock of this client handed its lease to this writer in a write that landed. */
  | {
      readonly type: 'handedOver';
      readonly version: string;
      readonly token: number;
      /** The record's token as the hand-over wrote it: the ones above `token` are reserved. */
      readonly top: number;
      /** The lease the hand-over wrote. */
      readonly leaseMs: number | null;
      readonly sentAt: number;
      /** Not to be trusted as it stands (see the passTo action): renewed before the caller gets it. */
      readonly distrusted?: true;
      readonly now: number;
    };

export type WriterAction =
  /** Read the record; the answer comes back as `read` (or `readFailed`) with the same `for`. */
  | { readonly type: 'read'; readonly for: number }
  | {
      readonly type: 'write';
      readonly seq: number;
      readonly intent: WriteIntent;
      readonly condition: WriteCondition;
    }
  /** Fire `timer` at monotonic time `at` (replacing the one armed before). */
  | { readonly type: 'arm'; readonly timer: TimerName; readonly at: number }
  /** The waiting caller gets the lease. */
  | { readonly type: 'acquired'; readonly token: number }
  /** The caller's lease is lost: abort its signal. `expired`: its deadline passed; `taken`: the record moved on without it. */
  | { readonly type: 'lost'; readonly why: 'expired' | 'taken' }
  /** The caller's extend (or update) landed. */
  | { readonly type: 'extended' }
  /** A heartbeat renewal landed: the lease is trusted anew. */
  | { readonly type: 'renewed' }
  /** The caller's release (or hand-over) is done. */
  | { readonly type: 'released' }
  /** Pass the lease to the local waiter `to` (its writer gets `handedOver`). */
  | {
      readonly type: 'passTo';
      readonly to: string;
      readonly version: string;
      readonly token: number;
      readonly top: number;
      readonly leaseMs: number | null;
      readonly sentAt: number;
      /** The hand-over overlapped a forceRelease of this client (or a suspend): not to be trusted as it stands. */
      readonly distrusted?: true;
    }
  /** A local pass: the next caller holds the lease on `token`. */
  | { readonly type: 'passed'; readonly token: number }
  /** No local pass now (no reserved token left, too little lease left, a write in flight…): hand over with a write. */
  | { readonly type: 'notPassed' }
  /**
   * The caller's release, hand-over or extend failed: `lost` (not held, maybe applied), `refused`
   * (still held), or `unknown`: a release or hand-over whose write may have landed; the writer
   * goes on resolving it, and a release called again joins it.
   */
  | {
      readonly type: 'failed';
      readonly op: 'release' | 'handOver' | 'extend';
      readonly why: 'lost' | 'refused' | 'unknown';
      readonly maybeApplied: boolean;
    }
  | { readonly type: 'ended'; readonly end: WriterEnd };

export interface Step<S> {
  readonly state: S;
  readonly actions: readonly WriterAction[];
}
