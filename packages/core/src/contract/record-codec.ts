import { LockCorruptedError } from '../shared/errors.js';
import { type LeaseHolder, type LockRecord, RECORD_SCHEMA, type SlotHolder } from './lock-record.js';

/**
 * JSON form of a lock record, used by stores that keep a document per key (S3, memory).
 * Parsing checks every field: a record we cannot fully understand is reported, never reused.
 */
export function encodeRecord(record: LockRecord): string {
  const { extensions, holder, holders, ...known } = record;
  const storedHolder = holder && encodeHolder(holder);
  const stored: Record<string, unknown> = {
    ...extensions,
    latch: RECORD_SCHEMA,
    ...known,
    holder: storedHolder,
  };
  // Unknown fields first, so that a field this version knows is never shadowed by one it kept.
  if (holders !== undefined) stored.holders = holders.map(encodeHolder);
  return JSON.stringify(stored);
}

/** A semaphore's holders as JSON, as the record keeps them (stores with attributes keep this text). */
export function encodeHolders(holders: readonly SlotHolder[]): string {
  return JSON.stringify(holders.map(encodeHolder));
}

function encodeHolder(holder: LeaseHolder): Record<string, unknown> {
  const { extensions, ...known } = holder;
  return { ...extensions, ...known };
}

const RECORD_FIELDS = new Set(['latch', 'token', 'holder', 'data', 'writeId', 'limit', 'holders']);
const HOLDER_FIELDS = new Set([
  'owner',
  'lockId',
  'acquiredAt',
  'renewedAt',
  'leaseMs',
  'expiresAt',
  'context',
  'token',
]);
const SLOT_HOLDER_FIELDS = new Set([...HOLDER_FIELDS, 'writeId']);

/** Fields of `raw` outside `known`, or undefined when there are none. */
function unknownFields(
  raw: Record<string, unknown>,
  known: Set<string>,
): Record<string, unknown> | undefined {
  const extra = Object.entries(raw).filter(([name]) => !known.has(name));
  return extra.length > 0 ? Object.fromEntries(extra) : undefined;
}

export function decodeRecord(key: string, text: string): LockRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new LockCorruptedError(key, 'not valid JSON', { cause: error });
  }
  return parseRecordObject(key, raw);
}

/** Validates an already-parsed record object (shared with stores that keep attributes). */
export function parseRecordObject(key: string, raw: unknown): LockRecord {
  if (!isObject(raw)) throw new LockCorruptedError(key, 'not a JSON object');
  // Whatever else is wrong, a readable token is kept by forceRelease so fencing never goes back.
  const tokenFloor = Number.isSafeInteger(raw.token) ? (raw.token as number) : undefined;
  try {
    return parseCheckedRecord(key, raw);
  } catch (error) {
    if (!(error instanceof LockCorruptedError)) throw error;
    throw new LockCorruptedError(key, error.reason, { cause: error.cause, tokenFloor });
  }
}

function parseCheckedRecord(key: string, raw: Record<string, unknown>): LockRecord {
  if (typeof raw.latch === 'number' && raw.latch > RECORD_SCHEMA) {
    throw new LockCorruptedError(
      key,
      `written by a newer version of Latch, record schema ${raw.latch}; this version reads schema ${RECORD_SCHEMA}: upgrade @latch/core on this replica`,
    );
  }
  if (raw.latch !== RECORD_SCHEMA) {
    throw new LockCorruptedError(key, `unknown record schema ${JSON.stringify(raw.latch)}`);
  }
  const token = raw.token;
  if (!Number.isSafeInteger(token) || (token as number) < 0) {
    throw new LockCorruptedError(key, 'fencing token is not a non-negative integer');
  }
  if (typeof raw.writeId !== 'string') throw new LockCorruptedError(key, 'writeId is missing');
  const record: LockRecord = {
    token: token as number,
    holder: raw.holder === null ? null : parseHolder(key, raw.holder),
    writeId: raw.writeId,
  };
  if ('data' in raw) record.data = raw.data;
  checkHolderToken(key, raw.holder, record);
  if (raw.limit !== undefined || raw.holders !== undefined) parseSemaphore(key, raw, record);
  const extensions = unknownFields(raw, RECORD_FIELDS);
  if (extensions) record.extensions = extensions;
  return record;
}

/** A plain holder's own token, when stored: at most the record's (which reserves those above it). */
function checkHolderToken(key: string, rawHolder: unknown, record: LockRecord): void {
  if (!record.holder || !isObject(rawHolder) || rawHolder.token === undefined) return;
  const { token } = rawHolder;
  if (!Number.isSafeInteger(token) || (token as number) < 1 || (token as number) > record.token) {
    throw new LockCorruptedError(key, "the holder's token is not an integer up to the record's");
  }
  record.holder.token = token as number;
}

/** The semaphore fields: a limit of 2 or more, and holders each with a token and write id. */
function parseSemaphore(key: string, raw: Record<string, unknown>, record: LockRecord): void {
  const { limit, holders } = raw;
  if (!Number.isSafeInteger(limit) || (limit as number) < 2) {
    throw new LockCorruptedError(key, 'semaphore limit is not an integer of 2 or more');
  }
  if (!Array.isArray(holders)) throw new LockCorruptedError(key, 'semaphore holders is not a list');
  record.limit = limit as number;
  record.holders = holders.map((entry): SlotHolder => {
    const holder = parseHolder(key, entry, SLOT_HOLDER_FIELDS);
    const { token, writeId } = entry as Record<string, unknown>;
    if (!Number.isSafeInteger(token) || (token as number) < 1 || (token as number) > record.token) {
      throw new LockCorruptedError(key, "a semaphore holder's token is not an integer up to the record's");
    }
    if (typeof writeId !== 'string')
      throw new LockCorruptedError(key, "a semaphore holder's writeId is missing");
    return { ...holder, token: token as number, writeId };
  });
}

function parseHolder(key: string, raw: unknown, known: Set<string> = HOLDER_FIELDS): LeaseHolder {
  if (!isObject(raw)) throw new LockCorruptedError(key, 'holder is not an object');
  const { owner, lockId, acquiredAt, renewedAt, leaseMs, expiresAt, context } = raw;
  if (typeof owner !== 'string' || typeof lockId !== 'string') {
    throw new LockCorruptedError(key, 'holder owner or lockId is not a string');
  }
  if (!isTime(acquiredAt) || !isTime(renewedAt)) {
    throw new LockCorruptedError(key, 'holder timestamps are not numbers');
  }
  if (!(leaseMs === null || isTime(leaseMs)) || !(expiresAt === null || isTime(expiresAt))) {
    throw new LockCorruptedError(key, 'holder lease or expiry is not a number or null');
  }
  if (context !== undefined && typeof context !== 'string') {
    throw new LockCorruptedError(key, 'holder context is not a string');
  }
  const holder: LeaseHolder = { owner, lockId, acquiredAt, renewedAt, leaseMs, expiresAt, context };
  const extensions = unknownFields(raw, known);
  if (extensions) holder.extensions = extensions;
  return holder;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
