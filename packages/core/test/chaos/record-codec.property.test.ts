import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { LeaseHolder, LockRecord } from '../../src/contract/lock-record.js';
import { decodeRecord, encodeRecord } from '../../src/contract/record-codec.js';
import { LockCorruptedError } from '../../src/index.js';
import { decodeItem, type Item, recordAttributes } from '../../src/stores/dynamo-item-codec.js';

// Whatever a store hands back — garbage, truncated writes, records of another version,
// hand-edited items — decoding either yields a well-formed record or throws a
// LockCorruptedError naming the key. Never another error, never a hang.

const KEY = 'codec/property';
const KEY_ATTRIBUTES: ReadonlySet<string> = new Set(['pk']);
const RUNS = { numRuns: 400 };

/** Decodes and classifies: 'record' or 'corrupted'; any other throw fails the property. */
function outcomeOf(decode: () => LockRecord | { record: LockRecord }): 'record' | 'corrupted' {
  try {
    decode();
    return 'record';
  } catch (error) {
    if (!(error instanceof LockCorruptedError)) throw error;
    expect(error.key).toBe(KEY);
    expect(error.message).toContain(KEY);
    return 'corrupted';
  }
}

const time = fc.integer({ min: 0, max: 4_102_444_800_000 });
const holder: fc.Arbitrary<LeaseHolder> = fc.record(
  {
    owner: fc.string({ minLength: 1 }),
    lockId: fc.uuid(),
    acquiredAt: time,
    renewedAt: time,
    leaseMs: fc.option(fc.integer({ min: 1, max: 86_400_000 }), { nil: null }),
    expiresAt: fc.option(time, { nil: null }),
    context: fc.string(),
  },
  { requiredKeys: ['owner', 'lockId', 'acquiredAt', 'renewedAt', 'leaseMs', 'expiresAt'] },
);
const record: fc.Arbitrary<LockRecord> = fc.record(
  {
    token: fc.nat(),
    holder: fc.option(holder, { nil: null }),
    writeId: fc.uuid(),
    data: fc.jsonValue(),
  },
  { requiredKeys: ['token', 'holder', 'writeId'] },
);

describe('the JSON record codec (S3 and memory stores)', () => {
  test('any text decodes to a record or a LockCorruptedError', () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.json(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
    );
    fc.assert(
      fc.property(text, (t) => {
        outcomeOf(() => decodeRecord(KEY, t));
      }),
      RUNS,
    );
  });

  test('a valid record survives encoding unchanged', () => {
    fc.assert(
      fc.property(record, (r) => {
        // JSON drops -0's sign; the codec is not asked to keep it.
        expect(decodeRecord(KEY, encodeRecord(r))).toEqual(JSON.parse(JSON.stringify(r)));
      }),
      RUNS,
    );
  });

  test('every truncation of a stored record is reported, never read as a record', () => {
    fc.assert(
      fc.property(record, fc.nat(), (r, cut) => {
        const text = encodeRecord(r);
        const prefix = text.slice(0, cut % text.length);
        expect(outcomeOf(() => decodeRecord(KEY, prefix))).toBe('corrupted');
      }),
      RUNS,
    );
  });

  test('a record with one field replaced by any JSON value decodes only if that value is valid there', () => {
    const paths = fc.constantFrom(
      ['latch'],
      ['token'],
      ['writeId'],
      ['holder'],
      ['holder', 'owner'],
      ['holder', 'lockId'],
      ['holder', 'acquiredAt'],
      ['holder', 'renewedAt'],
      ['holder', 'leaseMs'],
      ['holder', 'expiresAt'],
      ['holder', 'context'],
    );
    fc.assert(
      fc.property(
        record,
        holder,
        paths,
        fc.option(fc.jsonValue(), { nil: undefined }),
        (r, h, path, value) => {
          const doc = JSON.parse(encodeRecord({ ...r, holder: h })) as Record<string, unknown>;
          const parent = (path.length === 2 ? doc.holder : doc) as Record<string, unknown>;
          const field = path.at(-1)!;
          if (value === undefined) delete parent[field];
          else parent[field] = value;
          if (outcomeOf(() => decodeRecord(KEY, JSON.stringify(doc))) === 'record') {
            // Accepted: then it is a record the codec would write again as is.
            const decoded = decodeRecord(KEY, JSON.stringify(doc));
            expect(decodeRecord(KEY, encodeRecord(decoded))).toEqual(decoded);
          }
        },
      ),
      RUNS,
    );
  });

  test('deeply nested data neither crashes nor hangs', () => {
    const depth = 100_000;
    const nested = `{"latch":1,"token":3,"holder":null,"writeId":"w","data":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    expect(['record', 'corrupted']).toContain(outcomeOf(() => decodeRecord(KEY, nested)));
    expect(outcomeOf(() => decodeRecord(KEY, '['.repeat(depth)))).toBe('corrupted');
  });
});

describe('the DynamoDB item codec', () => {
  const attributeValue: fc.Arbitrary<Item[string]> = fc.oneof(
    fc.record({ S: fc.string() }),
    fc.record({ N: fc.oneof(fc.double().map(String), fc.string()) }),
    fc.record({ BOOL: fc.boolean() }),
    fc.record({ NULL: fc.constant(true) }),
    fc.record({ L: fc.constant([]) }),
    fc.record({ M: fc.constant({}) }),
    fc.record({ B: fc.uint8Array() }),
  ) as fc.Arbitrary<Item[string]>;
  const names = fc.constantFrom(
    'pk',
    'latch',
    'rv',
    'token',
    'writeId',
    'owner',
    'lockId',
    'acquiredAt',
    'renewedAt',
    'leaseMs',
    'expiresAt',
    'context',
    'data',
    'other',
  );

  test('any item decodes to a record or a LockCorruptedError', () => {
    fc.assert(
      fc.property(fc.dictionary(names, attributeValue), (item) => {
        outcomeOf(() => decodeItem(KEY, item, KEY_ATTRIBUTES));
      }),
      RUNS,
    );
  });

  test('a valid item with one attribute replaced or removed decodes to a record or a LockCorruptedError', () => {
    fc.assert(
      fc.property(
        record,
        fc.integer({ min: 1, max: 1000 }),
        names,
        fc.option(attributeValue, { nil: undefined }),
        (r, rv, name, value) => {
          const item: Item = { pk: { S: KEY }, ...recordAttributes(r, rv) };
          expect(outcomeOf(() => decodeItem(KEY, item, KEY_ATTRIBUTES))).toBe('record');
          if (value === undefined) delete item[name];
          else item[name] = value;
          outcomeOf(() => decodeItem(KEY, item, KEY_ATTRIBUTES));
        },
      ),
      RUNS,
    );
  });
});
