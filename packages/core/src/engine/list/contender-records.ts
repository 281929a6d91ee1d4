import type { LockRecord, VersionedRecord } from '../../contract/lock-record.js';
import type { ResolvedClock } from '../../shared/clock.js';
import { compareUtf8 } from '../../shared/key-order.js';
import { type RetryPolicy, withRetry } from '../../shared/retry.js';
import type { ListBucket } from './list-bucket.js';
import { type ContenderBody, decodeContenderBody } from './list-contender-body.js';
import {
  contendersInOrder,
  entryPrefix,
  isLive,
  type ListContender,
  type ListEntry,
  latestObjectKey,
  parseEntry,
  parseObjectKey,
} from './list-entries.js';

export interface Listing {
  /** Every object key listed, parsed or not. */
  objectKeys: Set<string>;
  /** Every contender, expired ones included, in queue order. */
  all: ListContender[];
  /** Contenders whose lease still runs, in queue order: the first one holds the lock. */
  live: ListContender[];
  /** Objects of our own contenders that are over, left out of `all` and `live`: nobody's, to delete. */
  leftOut: string[];
}

const BODY_CACHE_SIZE = 1000;

/** The contenders of a lock as listed from the bucket, with their bodies (fetched once: they never change). */
export class ContenderRecords {
  /** Contender bodies by `created.uuid`. */
  private readonly bodies = new Map<string, ContenderBody>();

  constructor(
    private readonly bucket: ListBucket,
    private readonly retry: RetryPolicy,
    private readonly clock: ResolvedClock,
    /** Contenders of ours that are over (see WithdrawnContenders): listings leave them out. */
    private readonly isWithdrawn: (uuid: string) => boolean,
  ) {}

  async list(key: string, signal?: AbortSignal): Promise<Listing> {
    const objectKeys = await withRetry(
      this.retry,
      this.clock.time,
      () => this.bucket.list(entryPrefix(key)),
      signal,
    );
    const entries = objectKeys
      .map((objectKey) => parseEntry(key, objectKey))
      .filter((entry): entry is ListEntry => entry !== undefined);
    return this.listingOf(objectKeys, entries, this.clock.time.now());
  }

  /**
   * Every lock with an object whose name starts with `prefix`, in key order (by UTF-8 bytes,
   * as S3 lists keys), each with its contenders as `list(name)` would find them: one listing of
   * the whole prefix, since the objects of one lock need not be listed next to each other.
   */
  async listUnder(prefix: string, signal?: AbortSignal): Promise<Array<{ key: string; listing: Listing }>> {
    const objectKeys = await withRetry(this.retry, this.clock.time, () => this.bucket.list(prefix), signal);
    const byName = new Map<string, ListEntry[]>();
    for (const objectKey of objectKeys) {
      const parsed = parseObjectKey(objectKey);
      if (!parsed?.name.startsWith(prefix)) continue;
      const entries = byName.get(parsed.name);
      if (entries) entries.push(parsed.entry);
      else byName.set(parsed.name, [parsed.entry]);
    }
    const now = this.clock.time.now();
    return [...byName.keys()].sort(compareUtf8).map((key) => {
      const entries = byName.get(key)!;
      const objectKeys = entries.map((entry) => entry.objectKey);
      return { key, listing: this.listingOf(objectKeys, entries, now) };
    });
  }

  private listingOf(objectKeys: string[], entries: ListEntry[], now: number): Listing {
    const leftOut: string[] = [];
    const kept: ListEntry[] = [];
    for (const entry of entries) {
      if (this.isWithdrawn(entry.uuid)) leftOut.push(entry.objectKey);
      else kept.push(entry);
    }
    const all = contendersInOrder(kept);
    return {
      objectKeys: new Set(objectKeys),
      all,
      live: all.filter((c) => isLive(c, now, this.clock.toleranceMs)),
      leftOut,
    };
  }

  /** The contender as a lock record (its body fetched once); null when its objects are gone. */
  async recordOf(
    key: string,
    contender: ListContender,
    signal?: AbortSignal,
  ): Promise<VersionedRecord | null> {
    const version = latestObjectKey(contender);
    let body = this.bodies.get(contenderId(contender));
    if (!body) {
      const text = await withRetry(this.retry, this.clock.time, () => this.bucket.get(version), signal);
      if (text === null) return null;
      body = decodeContenderBody(key, text);
      this.remember(contender, body);
    }
    return { version, record: toRecord(contender, body) };
  }

  remember(contender: ListContender, body: ContenderBody): void {
    this.bodies.set(contenderId(contender), body);
    if (this.bodies.size > BODY_CACHE_SIZE) {
      const oldest = this.bodies.keys().next().value;
      if (oldest !== undefined) this.bodies.delete(oldest);
    }
  }
}

/** A contender as the lock record `inspect` and the client see: its `created` time is the token. */
export function toRecord(contender: ListContender, body: ContenderBody): LockRecord {
  return {
    token: contender.created,
    holder: {
      owner: body.owner,
      lockId: contender.uuid,
      acquiredAt: body.acquiredAt,
      renewedAt: body.renewedAt,
      leaseMs: body.leaseMs,
      expiresAt: contender.expires,
      context: body.context,
    },
    writeId: contender.uuid,
  };
}

function contenderId(contender: ListContender): string {
  return `${contender.created}.${contender.uuid}`;
}
