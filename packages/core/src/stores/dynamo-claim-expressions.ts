import { RECORD_SCHEMA } from '../contract/lock-record.js';
import type { ClaimRequest } from '../contract/lock-store.js';
import { LockConfigError } from '../shared/errors.js';
import { describe } from '../shared/validation.js';
import { ATTR, holderAttributes, type Item, n, parseVersion, s } from './dynamo-item-codec.js';

/**
 * The one-request claim: set the holder and writeId, bump the record version and the
 * fencing token, leave `data` alone. It applies when there is no item, or the item is a
 * well-formed record whose lock is free, expired before `expiredBefore`, or still at
 * `version`. A record of another shape fails the condition and is reported, not rewritten.
 */
export function claimExpressions(request: ClaimRequest): { update: string; condition: string; values: Item } {
  const { record, expiredBefore, version, tokenFloor = 0 } = request;
  const { set, remove } = holderAttributes(record.holder);
  const values: Item = {
    ':schema': n(RECORD_SCHEMA),
    ':zero': n(0),
    ':one': n(1),
    ':number': s('N'),
    ':newWriteId': s(record.writeId),
    ':floor': n(tokenFloor),
  };
  const assignments = [
    '#latch = :schema',
    '#rv = if_not_exists(#rv, :zero) + :one',
    // An absent item starts above the token floor this client has seen (it was deleted since).
    '#token = if_not_exists(#token, :floor) + :one',
    '#writeId = :newWriteId',
  ];
  for (const [name, value] of Object.entries(set)) {
    assignments.push(`#${name} = :${name}`);
    values[`:${name}`] = value;
  }
  let update = `SET ${assignments.join(', ')}`;
  // A claim makes a plain lock: a semaphore's fields go (its holders had all expired, or it was free).
  const removed = [...remove, ATTR.limit, ATTR.holders];
  update += ` REMOVE ${removed.map((name) => `#${name}`).join(', ')}`;

  const claimable = [`attribute_not_exists(#${ATTR.owner})`];
  if (expiredBefore !== undefined) {
    if (!Number.isFinite(expiredBefore)) {
      throw new LockConfigError(
        `claim expiredBefore must be a finite time in ms, got ${describe(expiredBefore)}.`,
      );
    }
    claimable.push('#expiresAt < :before');
    values[':before'] = n(expiredBefore);
  }
  const expected = version === undefined ? undefined : parseVersion(version);
  if (expected) {
    claimable.push('(#rv = :rv AND #writeId = :writeId)');
    values[':rv'] = n(expected.rv);
    values[':writeId'] = s(expected.writeId);
  }
  const wellFormed =
    '#latch = :schema AND attribute_type(#rv, :number) AND attribute_type(#token, :number) AND #token >= :floor';
  const condition = `attribute_not_exists(#pk) OR (${wellFormed} AND (${claimable.join(' OR ')}))`;
  return { update, condition, values };
}
