import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { LeaseHolder, LockRecord, VersionedRecord } from '../contract/lock-record.js';
import { RECORD_SCHEMA } from '../contract/lock-record.js';
import { encodeHolders, parseRecordObject } from '../contract/record-codec.js';
import { LockConfigError, LockCorruptedError } from '../shared/errors.js';
import { describe } from '../shared/validation.js';

/**
 * A lock record as a DynamoDB item. Fields are top-level attributes (not one JSON blob) so
 * that condition expressions can look at the holder and its expiry, and an UpdateItem can
 * claim the lock without touching the stored data.
 */

export type Item = Record<string, AttributeValue>;

/** Attribute names the record uses; the table's key attributes must not collide with them. */
export const ATTR = {
  schema: 'latch',
  /** Record version: 1 on create, +1 on every write, so stale writers fail their condition. */
  rv: 'rv',
  token: 'token',
  writeId: 'writeId',
  owner: 'owner',
  lockId: 'lockId',
  acquiredAt: 'acquiredAt',
  renewedAt: 'renewedAt',
  leaseMs: 'leaseMs',
  expiresAt: 'expiresAt',
  context: 'context',
  /**
   * A plain holder's own token, when below the record's (LeaseHolder.token), as "token lockId":
   * an older Latch keeps attributes it does not know, so a token left from a holder before it
   * must not be read as its holder's.
   */
  holderToken: 'holderToken',
  data: 'data',
  /** Semaphores only: the limit, and every holder as one JSON list (conditions never look inside it). */
  limit: 'limit',
  holders: 'holders',
} as const;

export const RECORD_ATTRIBUTES: readonly string[] = Object.values(ATTR);
const HOLDER_ATTRIBUTES = [
  ATTR.owner,
  ATTR.lockId,
  ATTR.acquiredAt,
  ATTR.renewedAt,
  ATTR.leaseMs,
  ATTR.expiresAt,
  ATTR.context,
  ATTR.holderToken,
];

/**
 * The store's version string joins the record version with the id of the write that made
 * it: `rv` alone starts again at 1 when a key is deleted and created again, and a stale
 * version must never match the new record.
 */
export function formatVersion(rv: number, writeId: string): string {
  return `${rv}:${writeId}`;
}

/** Undefined when `version` cannot have come from this store (it then matches no record). */
export function parseVersion(version: string): { rv: number; writeId: string } | undefined {
  const match = /^([1-9]\d{0,15}):(.*)$/s.exec(version);
  if (!match) return undefined;
  const rv = Number(match[1]);
  return Number.isSafeInteger(rv) ? { rv, writeId: match[2]! } : undefined;
}

export const n = (value: number): AttributeValue => ({ N: String(value) });
export const s = (value: string): AttributeValue => ({ S: value });

/** The holder's attributes to set, and the optional ones to remove because they are null. */
export function holderAttributes(holder: LeaseHolder | null): { set: Item; remove: string[] } {
  if (holder === null) return { set: {}, remove: HOLDER_ATTRIBUTES };
  const set: Item = {
    [ATTR.owner]: s(holder.owner),
    [ATTR.lockId]: s(holder.lockId),
    [ATTR.acquiredAt]: n(holder.acquiredAt),
    [ATTR.renewedAt]: n(holder.renewedAt),
  };
  const remove: string[] = [];
  // A fail-closed holder has no leaseMs/expiresAt attribute at all, so `expiresAt < :t` is false for it.
  if (holder.leaseMs === null) remove.push(ATTR.leaseMs);
  else set[ATTR.leaseMs] = n(holder.leaseMs);
  if (holder.expiresAt === null) remove.push(ATTR.expiresAt);
  else set[ATTR.expiresAt] = n(holder.expiresAt);
  if (holder.context === undefined) remove.push(ATTR.context);
  else set[ATTR.context] = s(holder.context);
  // A claim's new holder has none: a token left from the holder before must go with it.
  if (holder.token === undefined) remove.push(ATTR.holderToken);
  else set[ATTR.holderToken] = s(`${holder.token} ${holder.lockId}`);
  return { set, remove };
}

/** Every non-key attribute of the record's item, with record version `rv`. */
export function recordAttributes(record: LockRecord, rv: number): Item {
  const item: Item = {
    [ATTR.schema]: n(RECORD_SCHEMA),
    [ATTR.rv]: n(rv),
    [ATTR.token]: n(record.token),
    [ATTR.writeId]: s(record.writeId),
    ...holderAttributes(record.holder).set,
  };
  if (record.data !== undefined) item[ATTR.data] = s(JSON.stringify(record.data));
  if (record.limit !== undefined) item[ATTR.limit] = n(record.limit);
  if (record.holders !== undefined) item[ATTR.holders] = s(encodeHolders(record.holders));
  // Attributes a newer Latch added, kept as they were stored (decodeItem collected them).
  for (const [name, av] of Object.entries(record.extensions ?? {})) {
    if (!(name in item)) item[name] = av as AttributeValue;
  }
  return item;
}

/**
 * Reads an item back into a record. Anything missing, ill-typed or of another schema is
 * reported as corrupted (naming the key), never guessed at.
 */
export function decodeItem(key: string, item: Item, keyAttributes: ReadonlySet<string>): VersionedRecord {
  const rv = item[ATTR.rv]?.N === undefined ? Number.NaN : Number(item[ATTR.rv]!.N);
  const writeId = item[ATTR.writeId]?.S;
  // A record we cannot read can still be replaced by forceRelease when its version is readable.
  const version =
    Number.isSafeInteger(rv) && rv >= 1 && writeId !== undefined ? formatVersion(rv, writeId) : undefined;
  try {
    return decodeReadableItem(key, item, keyAttributes);
  } catch (error) {
    throw error instanceof LockCorruptedError ? error.withVersion(version) : error;
  }
}

function decodeReadableItem(key: string, item: Item, keyAttributes: ReadonlySet<string>): VersionedRecord {
  const value = (name: string): string | number | undefined => {
    const av = item[name];
    if (av === undefined) return undefined;
    if (av.S !== undefined) return av.S;
    if (av.N !== undefined) return Number(av.N);
    throw new LockCorruptedError(key, `attribute "${name}" is neither a string nor a number`);
  };
  const raw: Record<string, unknown> = {
    latch: value(ATTR.schema),
    token: value(ATTR.token),
    writeId: value(ATTR.writeId),
    holder: decodeHolder(key, value),
  };
  const data = value(ATTR.data);
  if (data !== undefined) {
    if (typeof data !== 'string')
      throw new LockCorruptedError(key, `attribute "${ATTR.data}" is not a string`);
    try {
      raw.data = JSON.parse(data);
    } catch (error) {
      throw new LockCorruptedError(key, `attribute "${ATTR.data}" is not valid JSON`, { cause: error });
    }
  }
  const limit = value(ATTR.limit);
  if (limit !== undefined) raw.limit = limit;
  const holders = value(ATTR.holders);
  if (holders !== undefined) {
    if (typeof holders !== 'string')
      throw new LockCorruptedError(key, `attribute "${ATTR.holders}" is not a string`);
    try {
      raw.holders = JSON.parse(holders);
    } catch (error) {
      throw new LockCorruptedError(key, `attribute "${ATTR.holders}" is not valid JSON`, { cause: error });
    }
  }
  const record = parseRecordObject(key, raw);
  const unknown = Object.entries(item).filter(
    ([name]) => !keyAttributes.has(name) && !RECORD_ATTRIBUTES.includes(name),
  );
  if (unknown.length > 0) record.extensions = Object.fromEntries(unknown);
  const rv = value(ATTR.rv);
  if (!Number.isSafeInteger(rv) || (rv as number) < 1) {
    throw new LockCorruptedError(key, `attribute "${ATTR.rv}" is not a positive integer`);
  }
  return { version: formatVersion(rv as number, record.writeId), record };
}

function decodeHolder(key: string, value: (name: string) => string | number | undefined): unknown {
  if (value(ATTR.owner) === undefined) {
    const stray = HOLDER_ATTRIBUTES.find((name) => value(name) !== undefined);
    if (stray) throw new LockCorruptedError(key, `attribute "${stray}" is set but the lock has no owner`);
    return null;
  }
  // Shape checks (types, required fields) are parseRecordObject's job; absent optionals mean null.
  return {
    owner: value(ATTR.owner),
    lockId: value(ATTR.lockId),
    acquiredAt: value(ATTR.acquiredAt),
    renewedAt: value(ATTR.renewedAt),
    leaseMs: value(ATTR.leaseMs) ?? null,
    expiresAt: value(ATTR.expiresAt) ?? null,
    context: value(ATTR.context),
    token: ownToken(key, value(ATTR.holderToken), value(ATTR.lockId)),
  };
}

/** The holder token stored for `lockId`; undefined when none is, or it was stored for an earlier holder. */
function ownToken(
  key: string,
  stored: string | number | undefined,
  lockId: string | number | undefined,
): unknown {
  if (stored === undefined) return undefined;
  const match = typeof stored === 'string' ? /^(\d{1,16}) (.+)$/s.exec(stored) : null;
  if (!match) throw new LockCorruptedError(key, `attribute "${ATTR.holderToken}" is not "token lockId"`);
  return match[2] === lockId ? Number(match[1]) : undefined;
}

/**
 * Approximate stored size of attributes, by DynamoDB's rules: name bytes plus, for a
 * string, its UTF-8 bytes, and for a number, one byte per two significant digits plus one.
 */
export function attributesBytes(item: Item): number {
  let total = 0;
  for (const [name, av] of Object.entries(item)) {
    total += Buffer.byteLength(name, 'utf8');
    if (av.S !== undefined) total += Buffer.byteLength(av.S, 'utf8');
    else if (av.N !== undefined) total += numberBytes(av.N);
  }
  return total;
}

function numberBytes(text: string): number {
  const mantissa = text
    .split(/[eE]/)[0]!
    .replace(/\D/g, '')
    .replace(/^0+|0+$/g, '');
  return Math.min(21, Math.ceil(mantissa.length / 2) + 1);
}

/** Key attribute names must be usable and must not collide with the record's own attributes. */
export function checkKeyAttributeNames(where: string, partitionKey: unknown, sortKey: unknown): void {
  const check = (option: string, name: unknown) => {
    if (typeof name !== 'string' || name.length === 0 || Buffer.byteLength(name, 'utf8') > 255) {
      throw new LockConfigError(
        `${where} \`${option}\` must be an attribute name of 1 to 255 bytes, got ${describe(name)}.`,
      );
    }
    if (RECORD_ATTRIBUTES.includes(name)) {
      throw new LockConfigError(
        `${where} \`${option}\` is "${name}", which Latch uses for a record attribute (${RECORD_ATTRIBUTES.join(', ')}). Name the table's key attribute something else, e.g. "pk".`,
      );
    }
  };
  check('partitionKey', partitionKey);
  if (sortKey === undefined) return;
  check('sortKey', sortKey);
  if (sortKey === partitionKey) {
    throw new LockConfigError(
      `${where} \`sortKey\` and \`partitionKey\` are both "${sortKey}"; they must differ.`,
    );
  }
}
