// What one writer (one store lease of one client: a lock, or a slot of a semaphore) knows and
// wants. Plain immutable data: `step` (writer-step.ts) makes the next state from it and an event.

/** What a record, read or returned with a refusal, shows to one writer. Made by the driver from a lock or a semaphore record alike. */
export interface RecordView {
  /** The record's version; null when the key has no record. */
  readonly version: string | null;
  /** The record's fencing token (the highest it holds). */
  readonly token: number;
  /** Sequence number of the write of this writer the record was last written by, if it was. */
  readonly lastSeq: number | undefined;
  /**
   * This writer's own entry, written by this writer: the lock's holder, or its semaphore slot
   * (its `seq` says which write). A hand-over naming this writer is not its own until the
   * handing lock passes it on (`handedOver`).
   */
  readonly own: { readonly seq: number; readonly token: number } | undefined;
  /** Whether a claim may be written now: free, expired, or a semaphore slot free, as this client judges. */
  readonly claimable: boolean;
  /**
   * The stored token is below one this writer saw before (the record was deleted and created
   * again): `token` is that floor, and a claim goes by version (a one-request claim would fail).
   */
  readonly belowFloor?: true;
}

/** How a writer's leases are taken and timed. */
export interface WriterTerms {
  /** Lease length in ms; null: fail-closed (held until released, never expires). */
  readonly leaseMs: number | null;
  /** How a claim is conditioned: on the version read, or in one request on the record's state. */
  readonly claimBy: 'version' | 'state';
  /** How much earlier than the lease's end the holder stops trusting it. */
  readonly marginMs: number;
  /** How long to wait before looking at a record again (a busy key, a failed read). */
  readonly retryMs: number;
  /**
   * A semaphore slot: the record's tokens above the slot's own are other holders', none
   * reserved for it, so it never passes on locally.
   */
  readonly slot?: boolean;
  /**
   * How often a holder renews, counted from the write that last confirmed its lease (default:
   * halfway through what is left of it); false: never (the lease runs to its end unless the
   * caller extends it).
   */
  readonly renewEveryMs?: number | false;
  /**
   * How often a holder whose lease nothing renews (fail-closed, or `renewEveryMs` false) reads
   * the record, to learn that it was taken away (a forceRelease, a release by handle).
   */
  readonly verifyMs?: number;
}

/** A lease this writer holds, as confirmed by the store. */
export interface Lease {
  readonly version: string;
  /** The token of the caller holding it now: the writer's, or a later one a local pass gave. */
  readonly token: number;
  /**
   * The record's token as this writer's last write left it. The tokens above `token` up to it
   * are reserved for this lease: a local pass takes the next one with no write.
   */
  readonly top: number;
  /** Monotonic time from which the lease is no longer trusted (Infinity: fail-closed). */
  readonly deadline: number;
  /**
   * Monotonic time the lease was last confirmed: its last write's send, or a read that showed it
   * (for a lease nothing renews, a failed look counts too: the next waits its interval).
   */
  readonly confirmedAt: number;
}

/** Stored data: a serialized JSON value, or undefined to keep what the record has. */
export type Data = string | undefined;

/** What the writer is for, now. */
export type Goal =
  /**
   * A caller waits to get the lease. `resuming`: it takes over an acquisition made elsewhere (by
   * its handle): the renewal of that entry decides, and the writer never claims afresh.
   */
  | { readonly kind: 'acquire'; readonly resuming?: true }
  /** The caller holds the lease; `change` when it asked to renew it now (extend, or store data). */
  | { readonly kind: 'hold'; readonly change?: LeaseChange }
  /**
   * The caller asked to release it, storing `data`. `holdUntil` (lockAtLeastMs): instead of
   * freeing the key, shorten the lease to end then, and stop renewing: it runs out by itself (a
   * write sent once that time has passed frees the key). `sent`: the seq of the write sent for it.
   */
  | { readonly kind: 'release'; readonly data: Data; readonly holdUntil?: number; readonly sent?: number }
  /** The caller released it to the local waiter `to`, in one write. */
  | { readonly kind: 'handOver'; readonly to: string; readonly leaseMs: number | null; readonly data: Data }
  /** Nobody wants it any more: give back whatever this writer may own, then end. */
  | { readonly kind: 'giveBack' };

/** A renewal the caller asked for: a lease of `leaseMs` from its send (null: fail-closed), storing `data` when given. */
export interface LeaseChange {
  readonly leaseMs: number | null;
  readonly data: Data;
  /** The seq of the write sent for it, once sent: only that write answers it (a heartbeat never does). */
  readonly seq?: number;
}

/** What a write asks the store for; the driver builds the record from it and the record it knows. */
export type WriteIntent =
  /** `token` undefined: the store picks the record's token + 1, but at least `tokenFloor` + 1 (a record deleted and created again). */
  | { readonly kind: 'claim'; readonly token: number | undefined; readonly tokenFloor?: number }
  /** `token`: the holder's token to store (a local pass since the last write gave a later one). */
  | { readonly kind: 'renew'; readonly leaseMs: number | null; readonly token: number; readonly data?: Data }
  | { readonly kind: 'release'; readonly data: Data }
  | {
      readonly kind: 'handOver';
      readonly to: string;
      readonly token: number;
      readonly leaseMs: number | null;
      readonly data: Data;
    };

/** The condition a write is sent with. */
export type WriteCondition =
  | { readonly kind: 'absent' }
  | { readonly kind: 'version'; readonly version: string }
  /** The one-request claim: free or expired now (or still at `version`), judged by the store. */
  | { readonly kind: 'claimable'; readonly version: string | null };

/**
 * The writer's one write in flight or of unknown outcome. `sent`: waiting for its answer;
 * `unknown`: its outcome is unknown and a read is due; `reading`: that read is in flight;
 * `backoff`: that read failed, and the retry timer will send another; `refused`: the store
 * refused it for certain, and the retry timer decides the next write (a claim or a giving back
 * is not sent again at once).
 */
export interface PendingWrite {
  readonly seq: number;
  readonly intent: WriteIntent;
  readonly condition: WriteCondition;
  /** Monotonic time of the first send: a lease it wins counts from then, whichever copy landed. */
  readonly sentAt: number;
  readonly status: 'sent' | 'unknown' | 'reading' | 'backoff' | 'refused';
  /** Some copy of it had an unknown outcome: a refusal of a later copy proves nothing. */
  readonly mayHaveLanded: boolean;
  /**
   * Sent before a suspend, or overlapping a forceRelease of this client: the lease it confirms
   * is not trusted (a claim's is renewed before its caller gets it).
   */
  readonly distrusted?: true;
}

export type WriterEnd = 'released' | 'handedOver' | 'lost' | 'gaveUp';

export interface WriterState {
  readonly writer: string;
  /** Sequence number of the last write sent (0: none yet). */
  readonly seq: number;
  readonly terms: WriterTerms;
  readonly goal: Goal;
  readonly lease: Lease | null;
  readonly pending: PendingWrite | null;
  /** A read in flight that decides the next claim (not one resolving a write). */
  readonly reading: boolean;
  /** The record as last read or written: undefined before the first look, version null when absent. */
  readonly known: RecordView | undefined;
  /**
   * Set once the writer owns nothing and has nothing in flight that could still land (or, after a
   * release with `holdMs`, owns only a lease that runs out by itself).
   */
  readonly end: WriterEnd | null;
}

/** A writer that wants the key, has sent nothing yet, and knows `known` of it (undefined: nothing). */
export function newWriter(writer: string, terms: WriterTerms, known?: RecordView): WriterState {
  return {
    writer,
    seq: 0,
    terms,
    goal: { kind: 'acquire' },
    lease: null,
    pending: null,
    reading: false,
    known,
    end: null,
  };
}

/**
 * The monotonic time from which a lease confirmed by a write sent at `sentAt` is not trusted:
 * the lease less the margin, or less twice the time the write took (`writeMs`: the next one may
 * take as long) when that is more, though never less than half the lease (a lease extended to
 * something shorter than the margin is still trusted for half its length).
 */
export function deadlineFrom(sentAt: number, leaseMs: number | null, marginMs: number, writeMs = 0): number {
  if (leaseMs === null) return Number.POSITIVE_INFINITY;
  return sentAt + leaseMs - Math.min(Math.max(marginMs, 2 * writeMs), leaseMs / 2);
}

/**
 * The deadline the holder goes by: a write that shortens the lease counts from its send until
 * the store refuses it for certain, since once it lands others may take the key that early.
 */
export function effectiveDeadline(state: WriterState): number {
  const deadline = state.lease?.deadline ?? Number.NEGATIVE_INFINITY;
  const write = state.pending;
  if (write?.intent.kind !== 'renew') return deadline;
  const marginMs = Math.max(state.terms.marginMs, marginFor(write.intent.leaseMs));
  return Math.min(deadline, deadlineFrom(write.sentAt, write.intent.leaseMs, marginMs));
}

/**
 * The lease the holder goes by, as `effectiveDeadline`: the shorter of its terms' and that of a
 * renewal on its way (null: fail-closed, and nothing on its way makes it finite).
 */
export function effectiveLeaseMs(state: WriterState): number | null {
  const write = state.pending;
  const pending = write?.intent.kind === 'renew' ? write.intent.leaseMs : null;
  if (pending === null) return state.terms.leaseMs;
  return state.terms.leaseMs === null ? pending : Math.min(state.terms.leaseMs, pending);
}

/** The time a holder keeps in hand before its lease's end: a tenth of the lease, at most 2 s. */
export function marginFor(leaseMs: number | null): number {
  return leaseMs === null ? 0 : Math.min(leaseMs / 10, MAX_MARGIN_MS);
}

const MAX_MARGIN_MS = 2_000;

/** `view` as the writer keeps it: its token never below one the writer saw before (the record may have been deleted since). */
export function withFloor(state: WriterState, view: RecordView): RecordView {
  const floor = state.known?.token ?? 0;
  return view.token >= floor ? view : { ...view, token: floor, belowFloor: true };
}

/**
 * The terms once a renewal for `leaseMs` landed. A fail-closed lease made finite (an extend) is
 * renewed from then on every third of its lease (the pace its lock then reports, a lock's
 * default heartbeat), with the margin a lease of that length keeps.
 */
export function termsRenewedFor(terms: WriterTerms, leaseMs: number | null): WriterTerms {
  if (terms.leaseMs === null && leaseMs !== null) {
    return { ...terms, leaseMs, renewEveryMs: leaseMs / 3, marginMs: marginFor(leaseMs) };
  }
  return { ...terms, leaseMs };
}

/** Whether nothing renews a lease held on `terms`: a holder then reads the record to watch it. */
export function nothingRenews(terms: WriterTerms): boolean {
  return terms.leaseMs === null || terms.renewEveryMs === false;
}
