import type { LeaseHolder, LockRecord, SlotHolder } from '../../contract/lock-record.js';
import type { WriteIntent } from '../../protocol/writer-state.js';
import { RESERVED_TOKENS, reserveAhead } from './local-pass.js';
import { holdersOf, semaphoreRecord } from './slot-records.js';

/** What a write of the state machine needs beyond its intent: who writes it, and the holder fields it stores. */
export interface RecordWrite {
  /** The write's id, `<writer>:<seq>` (write-id.ts). */
  readonly writeId: string;
  /** The writer's acquisition: the holder entry that is its own. */
  readonly lockId: string;
  /** 1: a lock; more: a semaphore of that limit. */
  readonly limit: number;
  /** A claim's new holder; a renewal's renewed fields; a hand-over's waiter. */
  readonly holder?: LeaseHolder;
  /** A semaphore claim: the holders that still hold the key, as this client judges them. */
  readonly live?: readonly SlotHolder[];
}

/**
 * The record a write intent asks for, built on `base` (the record as last read or written; null:
 * none). A lock and a semaphore are built the same way, as a list of holder entries: only how
 * the list is stored differs (a lock's one `holder`, or `holders` with a stand-in `holder`).
 * Data and fields a newer version wrote are kept unless the intent stores data.
 */
export function recordFor(base: LockRecord | null, intent: WriteIntent, write: RecordWrite): LockRecord {
  const entries = base ? holdersOf(base) : [];
  const own = entries.find((entry) => entry.lockId === write.lockId);
  const others = entries.filter((entry) => entry.lockId !== write.lockId);
  let token = base?.token ?? 0;
  let holders: SlotHolder[];
  let data: { value: unknown } | undefined;
  switch (intent.kind) {
    case 'claim': {
      // A one-request claim's token is the store's to set (stored + 1): this one is replaced.
      const claimed = intent.token ?? token + 1;
      const kept = write.limit > 1 ? [...(write.live ?? [])] : [];
      holders = [...kept, { ...holderOf(write), token: claimed, writeId: write.writeId }];
      token = Math.max(token, claimed);
      break;
    }
    case 'renew': {
      if (!own) throw new Error(`recordFor: ${write.lockId} renews a record without its entry`);
      const fields = holderOf(write);
      const { renewedAt, leaseMs, expiresAt } = fields;
      // Passed on locally since the last write: the entry names the caller that holds it now.
      const caller =
        intent.token === own.token
          ? {}
          : { token: intent.token, acquiredAt: fields.acquiredAt, context: fields.context };
      holders = [...others, { ...own, ...caller, renewedAt, leaseMs, expiresAt, writeId: write.writeId }];
      // While a lock passes among its client's callers, tokens stay reserved ahead of them
      // (a lock with no reserve, its holder on the record's token, takes none).
      if (write.limit === 1 && intent.token < token) token = reserveAhead(intent.token, token);
      data = dataOf(intent.data);
      break;
    }
    case 'release':
      holders = others;
      data = dataOf(intent.data);
      break;
    case 'handOver':
      if (write.limit > 1) throw new Error('recordFor: a semaphore slot is not handed over');
      holders = [{ ...holderOf(write), token: intent.token, writeId: write.writeId }];
      // Tokens above the waiter's are reserved: it can pass the lock on locally with no write.
      token = Math.max(token, intent.token + RESERVED_TOKENS - 1);
      data = dataOf(intent.data);
      break;
  }
  const record =
    write.limit > 1
      ? semaphoreRecord(base ?? undefined, write.limit, holders, token, write.writeId)
      : lockRecord(base, holders[0], token, write.writeId);
  if (data) record.data = data.value;
  return record;
}

/** A plain lock's record: its one holder, with a token of its own only when below the record's. */
function lockRecord(
  base: LockRecord | null,
  entry: SlotHolder | undefined,
  token: number,
  writeId: string,
): LockRecord {
  let holder: LeaseHolder | null = null;
  if (entry) {
    const { writeId: _writeId, token: own, ...fields } = entry;
    holder = own < token ? { ...fields, token: own } : fields;
  }
  const record: LockRecord = { token, holder, writeId };
  if (base?.data !== undefined) record.data = base.data;
  if (base?.extensions !== undefined) record.extensions = base.extensions;
  return record;
}

function holderOf(write: RecordWrite): LeaseHolder {
  if (!write.holder) throw new Error(`recordFor: a write of ${write.lockId} needs its holder fields`);
  return write.holder;
}

/** The machine carries data as its JSON text (compared as such); the record stores the value. */
function dataOf(text: string | undefined): { value: unknown } | undefined {
  return text === undefined ? undefined : { value: JSON.parse(text) };
}
