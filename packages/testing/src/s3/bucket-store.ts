import type { ObjectChecksum } from './checksums.js';
import { s3Error } from './errors.js';
import type { MultipartUpload } from './multipart-upload.js';

/** One object as stored: an immutable snapshot, replaced as a whole by every write. */
export interface StoredObject {
  readonly key: string;
  readonly body: Buffer;
  /** Quoted hex MD5 of the body, exactly as it goes out in the ETag header. */
  readonly etag: string;
  readonly lastModified: Date;
  readonly contentType: string;
  /** User metadata from `x-amz-meta-*` headers: names lower-cased, without the prefix. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Cache-Control, Content-Disposition, Content-Encoding, Content-Language and Expires, when given. */
  readonly standardHeaders: Readonly<Record<string, string>>;
  readonly checksum?: ObjectChecksum;
}

interface Entry {
  readonly key: string;
  /** The key's UTF-8 bytes: S3 orders keys by these, which differs from JS string (UTF-16) order. */
  readonly bytes: Buffer;
  object: StoredObject;
}

export class Bucket {
  readonly createdAt = new Date();
  /** Every entry, sorted by {@link Entry.bytes}; kept sorted on each insert so listings never sort. */
  private readonly sorted: Entry[] = [];
  private readonly byKey = new Map<string, Entry>();
  /**
   * The store-wide sequence number of each key's last change, kept after a delete too. A conditional
   * write compares it with the value seen when its request arrived to detect that another write to the
   * same key committed while it was uploading (S3 answers that with 409 ConditionalRequestConflict).
   */
  private readonly versions = new Map<string, number>();
  /**
   * Multipart uploads in progress, by upload id, in the order they were created. They are not
   * objects: they do not keep a bucket from being deleted, and go with it (as on S3).
   */
  private readonly uploads = new Map<string, MultipartUpload>();
  /**
   * Each key's recent states (undefined: deleted), oldest first, kept for `historyMs` past the
   * next change: what a read that lags behind the writes sees. Empty when `historyMs` is 0.
   */
  private readonly history = new Map<string, Array<{ at: number; object: StoredObject | undefined }>>();

  constructor(
    readonly name: string,
    private readonly nextSequence: () => number,
    private readonly historyMs = 0,
  ) {}

  get objectCount(): number {
    return this.sorted.length;
  }

  get(key: string): StoredObject | undefined {
    return this.byKey.get(key)?.object;
  }

  /** `key` as it was at wall-clock time `at` (ms), as far back as the history reaches. */
  getAsOf(key: string, at: number): StoredObject | undefined {
    const states = this.history.get(key);
    if (!states) return this.get(key);
    let seen: StoredObject | undefined;
    for (const state of states) {
      if (state.at > at) break;
      seen = state.object;
    }
    return seen;
  }

  private remember(key: string, object: StoredObject | undefined): void {
    if (this.historyMs <= 0) return;
    const now = Date.now();
    const states = this.history.get(key) ?? [];
    // The state before a change older than the window is never read again: drop it.
    while (states.length > 1 && states[1]!.at < now - this.historyMs) states.shift();
    states.push({ at: now, object });
    this.history.set(key, states);
  }

  /** Sequence number of the last change to `key`; 0 when it was never written. */
  version(key: string): number {
    return this.versions.get(key) ?? 0;
  }

  put(object: StoredObject): void {
    this.versions.set(object.key, this.nextSequence());
    this.remember(object.key, object);
    const existing = this.byKey.get(object.key);
    if (existing) {
      existing.object = object;
      return;
    }
    const entry: Entry = { key: object.key, bytes: Buffer.from(object.key, 'utf8'), object };
    this.sorted.splice(this.lowerBound(entry.bytes), 0, entry);
    this.byKey.set(entry.key, entry);
  }

  /** Removes `key`; true when there was an object to remove. */
  delete(key: string): boolean {
    const entry = this.byKey.get(key);
    if (!entry) return false;
    this.versions.set(key, this.nextSequence());
    this.remember(key, undefined);
    this.byKey.delete(key);
    this.sorted.splice(this.lowerBound(entry.bytes), 1);
    return true;
  }

  addUpload(upload: MultipartUpload): void {
    this.uploads.set(upload.id, upload);
  }

  /** The upload with this id, in progress and created for `key`; else NoSuchUpload. */
  requireUpload(id: string | null, key: string): MultipartUpload {
    const upload = id === null ? undefined : this.uploads.get(id);
    if (upload?.key !== key) throw s3Error('NoSuchUpload', { extra: { UploadId: id ?? '' } });
    return upload;
  }

  /** Ends an upload (completed or aborted); true when it was in progress. */
  removeUpload(id: string): boolean {
    return this.uploads.delete(id);
  }

  /** Every upload in progress, in creation order. */
  pendingUploads(): MultipartUpload[] {
    return [...this.uploads.values()];
  }

  /** Index of the first entry whose key bytes are >= `bytes`. */
  lowerBound(bytes: Buffer): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(this.sorted[mid]!.bytes, bytes) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  entryAt(index: number): { readonly bytes: Buffer; readonly object: StoredObject } | undefined {
    return this.sorted[index];
  }
}

/** All buckets of one server. Everything lives in memory and is gone when the server stops. */
export class BucketStore {
  private readonly buckets = new Map<string, Bucket>();
  private sequence = 0;
  private readonly next = () => ++this.sequence;

  /** `historyMs`: how long each key's past states stay readable (stale reads); 0 keeps none. */
  constructor(private readonly historyMs = 0) {}

  get(name: string): Bucket | undefined {
    return this.buckets.get(name);
  }

  /** The bucket, or NoSuchBucket. */
  require(name: string): Bucket {
    const bucket = this.buckets.get(name);
    if (!bucket) throw s3Error('NoSuchBucket', { bucket: name });
    return bucket;
  }

  create(name: string): Bucket {
    if (this.buckets.has(name)) throw s3Error('BucketAlreadyOwnedByYou', { bucket: name });
    const bucket = new Bucket(name, this.next, this.historyMs);
    this.buckets.set(name, bucket);
    return bucket;
  }

  delete(name: string): void {
    const bucket = this.require(name);
    if (bucket.objectCount > 0) throw s3Error('BucketNotEmpty', { bucket: name });
    this.buckets.delete(name);
  }

  list(): Bucket[] {
    return [...this.buckets.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

/**
 * Bucket naming rules for general purpose buckets: 3-63 characters of lower-case letters, digits, dots
 * and hyphens, starting and ending with a letter or digit, no "..", not shaped like an IPv4 address,
 * and none of the prefixes/suffixes S3 reserves.
 */
export function isValidBucketName(name: string): boolean {
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name)) return false;
  if (name.includes('..') || /^\d+\.\d+\.\d+\.\d+$/.test(name)) return false;
  if (/^(xn--|sthree-|amzn-s3-demo-)/.test(name)) return false;
  return !/(-s3alias|--ol-s3|\.mrap|--x-s3|--table-s3)$/.test(name);
}
