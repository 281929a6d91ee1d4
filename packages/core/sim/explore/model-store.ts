import type { RecordView, WriteCondition, WriteIntent } from '../../src/protocol/writer-state.js';

// The store as the exhaustive checker models it: one record of a lock (limit 1) or a semaphore
// (limit > 1), versions that never repeat, and expiry judged against the one true time (the
// clocks agree; the simulator covers wrong ones).

export interface ModelHolder {
  /** The acquisition whose lease this entry is (its first writer's id; a resume writes it too). */
  readonly writer: string;
  /** The writer that wrote it (another one for a hand-over), and which of its writes. */
  readonly by: string;
  readonly seq: number;
  readonly token: number;
  /** Null: fail-closed, never expires. */
  readonly expiresAt: number | null;
}

export interface ModelRecord {
  readonly version: number;
  readonly token: number;
  readonly holders: readonly ModelHolder[];
  /** Who wrote the record last, and which of its writes (seq 0: an operator). */
  readonly writtenBy: string;
  readonly writtenSeq: number;
  readonly data: string | undefined;
}

export interface ModelWrite {
  readonly writer: string;
  /** The acquisition the writer writes for: its own id, or the one it resumed. */
  readonly acquisition: string;
  readonly seq: number;
  readonly intent: WriteIntent;
  readonly condition: WriteCondition;
  /** The lease the write asks for (null: fail-closed). */
  readonly leaseMs: number | null;
}

export type ModelAnswer =
  | { readonly ok: true; readonly record: ModelRecord; readonly token: number }
  | { readonly ok: false };

/**
 * Tokens a hand-over reserves above the one it gives, as the real record's RESERVED_TOKENS (1024)
 * does: small, so that the checker reaches the end of a reserve and a pass that must write.
 */
export const MODEL_RESERVED_TOKENS = 4;

const live = (holder: ModelHolder, now: number) => holder.expiresAt === null || now < holder.expiresAt;

export function isClaimable(record: ModelRecord | null, now: number, limit: number): boolean {
  return record === null || record.holders.filter((holder) => live(holder, now)).length < limit;
}

function conditionHolds(record: ModelRecord | null, condition: WriteCondition, now: number, limit: number) {
  switch (condition.kind) {
    case 'absent':
      return record === null;
    case 'version':
      return record !== null && `v${record.version}` === condition.version;
    case 'claimable':
      return (
        isClaimable(record, now, limit) || (record !== null && condition.version === `v${record.version}`)
      );
  }
}

/** Applies `write` to `record` at time `now`, if its condition holds. */
export function applyWrite(
  record: ModelRecord | null,
  write: ModelWrite,
  now: number,
  limit: number,
  /** The highest version the key ever had (a record created after a deletion goes on above it: S3 ETags and DynamoDB's rv+writeId never repeat). */
  versionFloor = 0,
): ModelAnswer {
  if (!conditionHolds(record, write.condition, now, limit)) return { ok: false };
  const { intent, writer, seq, acquisition } = write;
  const expiresAt = write.leaseMs === null ? null : now + write.leaseMs;
  const holders = (record?.holders ?? []).filter(
    (holder) => live(holder, now) || holder.writer === acquisition,
  );
  const others = holders.filter((holder) => holder.writer !== acquisition);
  const own = holders.find((holder) => holder.writer === acquisition);
  const base = record?.token ?? 0;
  let next: ModelHolder[];
  let token: number;
  /** The record's token, when the write reserves tokens above `token`. */
  let top = 0;
  let data = record?.data;
  switch (intent.kind) {
    case 'claim': {
      token = intent.token ?? Math.max(base, intent.tokenFloor ?? 0) + 1;
      const mine = { writer: acquisition, by: writer, seq, token, expiresAt };
      next = limit === 1 ? [mine] : [...others.filter((holder) => live(holder, now)), mine];
      break;
    }
    case 'renew':
      if (!own) throw new Error(`model: ${writer} renews v${record?.version} without an entry in it`);
      // The caller a local pass gave the lease to, since the last write.
      token = intent.token;
      next = [...others, { ...own, by: writer, seq, token, expiresAt }];
      if (intent.data !== undefined) data = intent.data;
      // The reserve is topped up while one is in use (a lock with none takes none).
      if (limit === 1 && token < base) {
        top = base - token >= MODEL_RESERVED_TOKENS / 2 ? base : token + MODEL_RESERVED_TOKENS;
      }
      break;
    case 'release':
      token = own?.token ?? base;
      next = others;
      if (intent.data !== undefined) data = intent.data;
      break;
    case 'handOver':
      token = intent.token;
      top = token + MODEL_RESERVED_TOKENS - 1;
      next = [...others, { writer: intent.to, by: writer, seq, token, expiresAt }];
      if (intent.data !== undefined) data = intent.data;
      break;
  }
  const written: ModelRecord = {
    version: (record?.version ?? versionFloor) + 1,
    token: Math.max(base, token, top),
    holders: next.sort((a, b) => a.writer.localeCompare(b.writer)),
    writtenBy: writer,
    writtenSeq: seq,
    data,
  };
  return { ok: true, record: written, token };
}

/** An operator's forceRelease: frees the record, keeping its token and data. */
export function forceFree(record: ModelRecord): ModelRecord {
  return { ...record, version: record.version + 1, holders: [], writtenBy: 'operator', writtenSeq: 0 };
}

/** What `record` shows to `writer` (see RecordView). */
export function viewOf(
  record: ModelRecord | null,
  writer: string,
  acquisition: string,
  now: number,
  limit: number,
): RecordView {
  if (record === null) {
    return { version: null, token: 0, lastSeq: undefined, own: undefined, claimable: true };
  }
  const own = record.holders.find((holder) => holder.writer === acquisition && holder.by === writer);
  return {
    version: `v${record.version}`,
    token: record.token,
    lastSeq: record.writtenBy === writer ? record.writtenSeq : undefined,
    own: own ? { seq: own.seq, token: own.token } : undefined,
    claimable: isClaimable(record, now, limit),
  };
}
