import type { VersionedRecord } from '../../contract/lock-record.js';

/**
 * What this client last learned about each key, to save requests and to judge staleness:
 * - `lastWriter`: true when our own write produced the record, so its version is current
 *   unless someone wrote since (then a conditional write simply fails and we read).
 * - `firstSeenAt`: monotonic time at which we first saw this exact version, for the
 *   untrusted-clock rule "unchanged for a full lease".
 * Bounded: the oldest keys are forgotten first.
 */
export interface KnownRecord {
  current: VersionedRecord | null;
  lastWriter: boolean;
  firstSeenAt: number;
  /** Highest fencing token seen for the key, even if the record was deleted since. */
  tokenFloor: number;
}

export class KnownRecords {
  private readonly entries = new Map<string, KnownRecord>();

  constructor(private readonly capacity = 10_000) {}

  get(key: string): KnownRecord | undefined {
    return this.entries.get(key);
  }

  /** Records a read or a write; keeps `firstSeenAt` while the version stays the same. */
  remember(key: string, current: VersionedRecord | null, lastWriter: boolean, seenAt: number): KnownRecord {
    const previous = this.entries.get(key);
    const sameVersion = previous !== undefined && previous.current?.version === current?.version;
    const entry: KnownRecord = {
      current,
      lastWriter,
      firstSeenAt: sameVersion ? previous.firstSeenAt : seenAt,
      tokenFloor: Math.max(previous?.tokenFloor ?? 0, current?.record.token ?? 0),
    };
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return entry;
  }

  /** The highest token this client has seen for `key` (0 when none): new tokens start above it. */
  tokenFloor(key: string): number {
    return this.entries.get(key)?.tokenFloor ?? 0;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}
