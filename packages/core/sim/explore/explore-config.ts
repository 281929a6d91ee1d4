import type { WriterTerms } from '../../src/protocol/writer-state.js';
import type { ModelRecord } from './model-store.js';

/** One small configuration the exhaustive checker enumerates every event order of. */
export interface ExploreConfig {
  readonly name: string;
  /** 1: a lock; more: a semaphore of that limit. */
  readonly limit: number;
  readonly writers: readonly {
    readonly id: string;
    /** A local waiter: sends nothing itself; it gets the key only by a hand-over (or gives up). */
    readonly local?: boolean;
    /**
     * Another process with the handle of writer `resumes`'s acquisition: it never claims; it may
     * resume that acquisition while the record holds its entry (the old process may still write).
     */
    readonly resumes?: string;
    readonly terms: WriterTerms;
  }[];
  /** How many faults one run may have: timeouts, refusals, answers lost after the write applied. */
  readonly faults: number;
  /** Time runs from 0 to this (ticks). */
  readonly maxTime: number;
  /** User calls per writer: release (with data), extend, hand-over, give up. */
  readonly userActions: number;
  /** Whether a holder's caller may store data while it holds (an update: a renewal that stores it). */
  readonly updates?: boolean;
  /** Whether a holder's caller may pass the lease on to another caller of its client with no write. */
  readonly passes?: boolean;
  /** When set, a release may also keep the lease this long instead of freeing the key (lockAtLeastMs). */
  readonly holdReleases?: number;
  /** The lease an `extend` asks for, when users may extend. */
  readonly extendTo?: number | null;
  /** How many times an operator may forceRelease the key. */
  readonly forceReleases: number;
  /**
   * How many times a writer's own client may forceRelease the key (it frees the record and tells
   * that writer at once). Configurations with local waiters leave it out: each writer is its own client.
   */
  readonly ownForceReleases?: number;
  /**
   * How many times a writer's process may be suspended, and for how many ticks: its monotonic
   * clock misses that time (it runs behind the world's from then on), and its driver tells it.
   */
  readonly suspends?: { readonly times: number; readonly ticks: number };
  /** The record at the start (default none): slots held by clients outside the configuration count toward exclusion. */
  readonly initialRecord?: ModelRecord;
  /** How many times the record may be deleted from outside (S3 lifecycle rule, DynamoDB TTL, a person). */
  readonly deletes?: number;
  /** Whether a refused write returns the record (DynamoDB) or nothing (S3: read it). */
  readonly conflictView: boolean;
  /**
   * How many events deep `pnpm test` enumerates every order (its time budget decides), or
   * 'all': every state the configuration can reach (small ones, whose space is finite and cheap).
   */
  readonly testDepth: number | 'all';
}

const finite = (claimBy: 'version' | 'state' = 'version', leaseMs = 4): WriterTerms => ({
  leaseMs,
  claimBy,
  marginMs: 0,
  retryMs: 1,
});
const failClosed: WriterTerms = { leaseMs: null, claimBy: 'version', marginMs: 0, retryMs: 1 };

/** Two writers of a lock (leases of 4 ticks), one of whose processes is suspended once for `ticks`. */
function suspendedHolder(name: string, ticks: number): ExploreConfig {
  return {
    name,
    limit: 1,
    writers: [
      { id: 'A', terms: finite() },
      { id: 'B', terms: finite() },
    ],
    faults: 0,
    maxTime: 8,
    userActions: 0,
    forceReleases: 0,
    suspends: { times: 1, ticks },
    conflictView: false,
    testDepth: 12,
  };
}

/** What `pnpm test` enumerates; `pnpm explore --depth N` goes deeper. */
export const CONFIGS: readonly ExploreConfig[] = [
  {
    // Short leases and no faults or user calls: deep enough for every timing of renewals and
    // answers against expiry.
    name: 'lock, two writers, timing only',
    limit: 1,
    writers: [
      { id: 'a', terms: finite('version', 2) },
      { id: 'b', terms: finite('version', 2) },
    ],
    faults: 0,
    maxTime: 5,
    userActions: 0,
    forceReleases: 0,
    conflictView: true,
    testDepth: 'all',
  },
  {
    name: 'lock, fail-closed, extend to finite, timing only',
    limit: 1,
    writers: [
      { id: 'a', terms: failClosed },
      { id: 'b', terms: failClosed },
    ],
    faults: 0,
    maxTime: 4,
    userActions: 1,
    extendTo: 2,
    forceReleases: 0,
    conflictView: true,
    testDepth: 'all',
  },
  {
    name: 'semaphore of limit 2, three writers, timing and one fault',
    limit: 2,
    writers: [
      { id: 'a', terms: finite('version', 2) },
      { id: 'b', terms: finite('version', 2) },
      { id: 'c', terms: finite('version', 2) },
    ],
    faults: 1,
    maxTime: 4,
    userActions: 0,
    forceReleases: 0,
    conflictView: true,
    testDepth: 9,
  },
  {
    // Holders store data while they hold (an update is a renewal that stores it), with faults:
    // an update told it landed must have, one told it did not must never land, and no late
    // copy may revert data stored after it.
    name: 'lock, updates with faults, S3 answers',
    limit: 1,
    writers: [
      { id: 'a', terms: finite() },
      { id: 'b', terms: finite() },
    ],
    faults: 1,
    maxTime: 5,
    userActions: 2,
    updates: true,
    forceReleases: 0,
    conflictView: false,
    testDepth: 9,
  },
  {
    name: 'lock, two writers, finite leases, S3 answers',
    limit: 1,
    writers: [
      { id: 'a', terms: finite() },
      { id: 'b', terms: finite() },
    ],
    faults: 2,
    maxTime: 6,
    userActions: 2,
    forceReleases: 0,
    conflictView: false,
    testDepth: 9,
  },
  {
    name: 'lock, fail-closed, extend to finite, operator forceRelease',
    limit: 1,
    writers: [
      { id: 'a', terms: failClosed },
      { id: 'b', terms: failClosed },
    ],
    faults: 2,
    maxTime: 5,
    userActions: 2,
    extendTo: 2,
    forceReleases: 1,
    conflictView: true,
    testDepth: 9,
  },
  {
    name: "lock, DynamoDB's one-request claim",
    limit: 1,
    writers: [
      { id: 'a', terms: finite('state') },
      { id: 'b', terms: finite('state') },
    ],
    faults: 2,
    maxTime: 6,
    userActions: 1,
    forceReleases: 0,
    conflictView: true,
    testDepth: 9,
  },
  {
    name: 'lock, hand-over to a local waiter, a foreign writer',
    limit: 1,
    writers: [
      { id: 'a', terms: finite() },
      { id: 'w', local: true, terms: finite() },
      { id: 'f', terms: finite() },
    ],
    faults: 2,
    maxTime: 5,
    userActions: 1,
    forceReleases: 0,
    conflictView: false,
    testDepth: 9,
  },
  {
    // A written hand-over reserves tokens; the waiter's callers then pass the lease on with no
    // write until the reserve runs low, while another client waits to take the key over.
    name: 'lock, local passes on reserved tokens, a foreign writer',
    limit: 1,
    writers: [
      { id: 'a', terms: finite() },
      { id: 'w', local: true, terms: finite() },
      { id: 'f', terms: finite() },
    ],
    faults: 0,
    maxTime: 5,
    userActions: 2,
    passes: true,
    forceReleases: 0,
    conflictView: true,
    testDepth: 10,
  },
  {
    // Another process resumes a's acquisition by its handle while a may still write, and a third
    // client waits: the resume renews the entry first, and a's writes must not land after it.
    name: 'lock, a resume in another process',
    limit: 1,
    writers: [
      { id: 'a', terms: finite() },
      { id: 'r', resumes: 'a', terms: finite() },
      { id: 'b', terms: finite() },
    ],
    faults: 0,
    maxTime: 5,
    userActions: 2,
    forceReleases: 0,
    conflictView: false,
    testDepth: 10,
  },
  {
    name: 'lock, fail-closed hand-over to a local waiter',
    limit: 1,
    writers: [
      { id: 'a', terms: failClosed },
      { id: 'w', local: true, terms: failClosed },
    ],
    faults: 2,
    maxTime: 3,
    userActions: 2,
    forceReleases: 0,
    conflictView: false,
    testDepth: 'all',
  },
  {
    name: 'semaphore of limit 2, three writers',
    limit: 2,
    writers: [
      { id: 'a', terms: finite() },
      { id: 'b', terms: finite() },
      { id: 'c', terms: failClosed },
    ],
    faults: 1,
    maxTime: 5,
    userActions: 1,
    forceReleases: 0,
    conflictView: true,
    testDepth: 8,
  },
  {
    // Short leases, one fault, one user call: a release or renewal meets a record moved on
    // within a dozen events.
    name: 'lock, short leases, one fault, one call',
    limit: 1,
    writers: [
      { id: 'a', terms: finite('version', 2) },
      { id: 'b', terms: finite('version', 2) },
    ],
    faults: 1,
    maxTime: 4,
    userActions: 1,
    forceReleases: 0,
    conflictView: true,
    testDepth: 10,
  },
  {
    // A waiter whose lease is longer than the holder's: the hand-over writes the waiter's lease,
    // and the waiter dates its lease by what was written.
    name: 'hand-over to a waiter with a longer lease',
    limit: 1,
    writers: [
      { id: 'a', terms: finite('version', 2) },
      { id: 'w', local: true, terms: finite('version', 4) },
      { id: 'f', terms: finite('version', 2) },
    ],
    faults: 0,
    maxTime: 4,
    userActions: 1,
    forceReleases: 0,
    conflictView: true,
    testDepth: 10,
  },
  {
    // Same terms everywhere; the holder shortens its lease (extend) before it hands over.
    name: 'hand-over after the holder shortened its lease',
    limit: 1,
    writers: [
      { id: 'a', terms: finite('version', 4) },
      { id: 'w', local: true, terms: finite('version', 4) },
      { id: 'f', terms: finite('version', 4) },
    ],
    faults: 0,
    maxTime: 5,
    userActions: 2,
    extendTo: 2,
    forceReleases: 0,
    conflictView: true,
    testDepth: 10,
  },
  {
    // The record deleted from outside (an S3 lifecycle rule, a DynamoDB TTL attribute, a person):
    // the contract has delete(), the engine keeps a token floor for it, the model never deletes.
    name: 'lock, the record deleted from outside',
    limit: 1,
    writers: [
      { id: 'a', terms: finite('version', 2) },
      { id: 'b', terms: finite('version', 2) },
    ],
    faults: 0,
    maxTime: 3,
    userActions: 1,
    forceReleases: 0,
    deletes: 1,
    conflictView: true,
    testDepth: 10,
  },
  {
    // One slot of the semaphore held by a client outside the configuration: two writers are
    // then enough to overfill it, within the depth `pnpm test` reaches.
    name: 'semaphore of limit 2, one slot held outside',
    limit: 2,
    writers: [
      { id: 'a', terms: finite('version', 2) },
      { id: 'b', terms: finite('version', 2) },
    ],
    initialRecord: {
      version: 1,
      token: 1,
      holders: [{ writer: 'x', by: 'x', seq: 1, token: 1, expiresAt: 1000 }],
      writtenBy: 'x',
      writtenSeq: 1,
      data: undefined,
    },
    faults: 1,
    maxTime: 4,
    userActions: 1,
    forceReleases: 0,
    conflictView: true,
    testDepth: 10,
  },
  // A holder's process is suspended for longer than its lease: its monotonic clock missed the
  // time, so only the suspend event keeps it from believing it holds while another takes over.
  suspendedHolder('lock, a suspended holder', 5),
  // Suspended for half its lease: its lease ends that much sooner by its monotonic clock (no loss
  // yet), and a write in flight then counts from that much earlier.
  suspendedHolder('lock, a holder suspended for half its lease', 2),
  {
    // The holder's own client force-releases the key while claims are on their way (one-request
    // claims may land after the record was freed): the holder must stop at once.
    name: "lock, a forceRelease by the holder's own client, one-request claims",
    limit: 1,
    writers: [
      { id: 'A', terms: finite('state') },
      { id: 'B', terms: finite('state') },
    ],
    faults: 0,
    maxTime: 6,
    userActions: 0,
    forceReleases: 0,
    ownForceReleases: 1,
    conflictView: true,
    testDepth: 12,
  },
  {
    // Holders nothing renews (fail-closed; a finite lease its caller does not renew) look at the
    // record now and then: once a look shows an operator freed the key, the caller hears so.
    name: 'lock, holders nothing renews watch the record, operator forceRelease',
    limit: 1,
    writers: [
      { id: 'a', terms: { ...failClosed, verifyMs: 1 } },
      { id: 'b', terms: { ...finite('version', 3), renewEveryMs: false, verifyMs: 1 } },
    ],
    faults: 0,
    maxTime: 4,
    userActions: 0,
    forceReleases: 1,
    conflictView: true,
    testDepth: 'all',
  },
  {
    // A release that keeps the lock a while (lockAtLeastMs) shortens the lease and stops renewing,
    // with faults: told it released, its data landed; told it failed, it never lands.
    name: 'lock, releases that keep the lease a while, one fault',
    limit: 1,
    writers: [
      { id: 'a', terms: finite('version', 2) },
      { id: 'b', terms: finite('version', 2) },
    ],
    faults: 1,
    maxTime: 3,
    userActions: 1,
    holdReleases: 1,
    forceReleases: 0,
    conflictView: true,
    testDepth: 10,
  },
];
