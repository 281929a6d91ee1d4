import type { LockRecord, VersionedRecord } from '../src/contract/lock-record.js';
import type { ClaimOutcome, ClaimRequest, WriteCondition, WriteOutcome } from '../src/contract/lock-store.js';
import { decodeRecord, encodeRecord } from '../src/contract/record-codec.js';

/**
 * 's3': conditional writes only; a failed condition says nothing about the stored record.
 * 'dynamo': a failed condition returns the stored record (ALL_OLD), and the store offers the
 * one-request claim.
 */
export type StoreFlavor = 's3' | 'dynamo';

/** A write the backend applied, for the checkers (records as any reader would decode them). */
export interface AppliedWrite {
  key: string;
  op: 'write' | 'delete' | 'claim';
  /** Process that sent the request. */
  from: string;
  before: LockRecord | null;
  after: LockRecord | null;
}

interface Doc {
  version: string;
  text: string;
  record: LockRecord;
}

/**
 * The one shared store every simulated client talks to, with the memory store's semantics: a
 * JSON document per key (encoded by core's own codec), a counter version that never repeats,
 * create-if-absent, replace-if-version, delete-if-version, and in the 'dynamo' flavour the
 * one-request claim of DynamoDB's UpdateItem. It applies requests instantly when they reach
 * it; all delay and loss lives in the per-client networks.
 */
export class SimBackend {
  private readonly docs = new Map<string, Doc>();
  private nextVersion = 1;

  constructor(
    readonly flavor: StoreFlavor,
    private readonly onApplied: (write: AppliedWrite) => void,
  ) {}

  /** The stored record as the checkers see it (never handed to clients). */
  peek(key: string): LockRecord | null {
    return this.docs.get(key)?.record ?? null;
  }

  keys(): string[] {
    return [...this.docs.keys()];
  }

  read(key: string): VersionedRecord | null {
    const doc = this.docs.get(key);
    return doc ? { version: doc.version, record: decodeRecord(key, doc.text) } : null;
  }

  write(key: string, text: string, condition: WriteCondition, from: string): WriteOutcome {
    const doc = this.docs.get(key);
    if ('absent' in condition ? doc !== undefined : doc?.version !== condition.version) {
      return this.conflict(key, doc, 'version' in condition);
    }
    return { ok: true, version: this.put(key, text, 'write', from, doc) };
  }

  delete(key: string, version: string, from: string): WriteOutcome {
    const doc = this.docs.get(key);
    if (doc?.version !== version) return this.conflict(key, doc, true);
    this.docs.delete(key);
    this.onApplied({ key, op: 'delete', from, before: doc.record, after: null });
    return { ok: true, version };
  }

  /**
   * DynamoDB's claim: applies when there is no item, or the stored token is at least
   * `tokenFloor` and the lock is free, the holder's lease ended before `expiredBefore`, or the
   * version matches. It sets the holder and writeId, bumps the token (an absent item starts
   * above `tokenFloor`), removes a semaphore's limit and holders, and keeps every other
   * attribute (data, extensions).
   */
  claim(key: string, requestText: string, request: ClaimRequest, from: string): ClaimOutcome {
    const doc = this.docs.get(key);
    const wanted = JSON.parse(requestText) as LockRecord;
    const floor = request.tokenFloor ?? 0;
    const holder = doc?.record.holder;
    const claimable =
      !doc ||
      (doc.record.token >= floor &&
        (!holder ||
          (request.expiredBefore !== undefined &&
            holder.expiresAt !== null &&
            holder.expiresAt < request.expiredBefore) ||
          (request.version !== undefined && doc.version === request.version)));
    if (!claimable) return { ok: false, current: this.read(key) };
    // The claim makes a plain lock: DynamoDB's update removes a semaphore's limit and holders.
    const { limit: _limit, holders: _holders, ...kept } = doc?.record ?? ({} as Partial<LockRecord>);
    const record: LockRecord = {
      ...kept,
      token: doc ? doc.record.token + 1 : floor + 1,
      holder: wanted.holder,
      writeId: wanted.writeId,
    };
    const text = encodeRecord(record);
    const version = this.put(key, text, 'claim', from, doc);
    return { ok: true, version, record: decodeRecord(key, text) };
  }

  private put(key: string, text: string, op: AppliedWrite['op'], from: string, before: Doc | undefined) {
    const version = `v${this.nextVersion++}`;
    const record = decodeRecord(key, text);
    this.docs.set(key, { version, text, record });
    this.onApplied({ key, op, from, before: before?.record ?? null, after: record });
    return version;
  }

  private conflict(key: string, doc: Doc | undefined, ifMatch: boolean): WriteOutcome {
    if (this.flavor === 'dynamo') return { ok: false, current: doc ? this.read(key) : null };
    // S3: 412 says nothing about the object; If-Match on a missing object is a 404.
    if (!doc && ifMatch) return { ok: false, current: null };
    return { ok: false };
  }
}
