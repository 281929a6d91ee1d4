// Records and keys come back exactly as written: data of any JSON shape, every holder field,
// keys with characters URLs and paths treat specially; sizes and key limits are checked
// before sending; an unreadable record is reported naming its key, never overwritten.
import { expect, it } from 'vitest';
import { type ContractRun, expectOk, freshKey } from './contract-run.js';
import { freeRecord, heldRecord } from './records.js';

export function recordCases(run: ContractRun): void {
  const { LockConfigError, LockCorruptedError } = run.latch;

  it('round-trips data: unicode, nested JSON, falsy values, and no data at all', async () => {
    const store = run.store();
    const samples: unknown[] = [
      { city: 'Zürich', note: 'naïve café — 漢字 — 🚀🔒', rtl: 'שלום', zeroWidth: 'a\u200Db' },
      { nested: { list: [1, -2.5, 1e21, { deep: [null, true, false, ''] }], empty: {}, none: [] } },
      'just a string with "quotes" and \\ backslashes\n',
      0,
      false,
      null,
      [],
    ];
    for (const data of samples) {
      const key = freshKey('data');
      const record = heldRecord(7, {}, data);
      const version = expectOk(await store.write(key, record, { absent: true }));
      const read = await store.read(key);
      expect(read).toEqual({ version, record });
      expect(read?.record.data).toStrictEqual(data);
    }
    const key = freshKey('no-data');
    expectOk(await store.write(key, freeRecord(2), { absent: true }));
    const read = await store.read(key);
    expect(read?.record).not.toHaveProperty('data');
  });

  it('keeps every holder field, including a fail-closed lease and a missing context', async () => {
    const store = run.store();
    const key = freshKey('holder');
    const record = heldRecord(9, { leaseMs: null, expiresAt: null, context: undefined });
    const version = expectOk(await store.write(key, record, { absent: true }));
    const read = await store.read(key);
    expect(read).toEqual({ version, record });
    expect(read?.record.holder?.leaseMs).toBeNull();
    expect(read?.record.holder?.expiresAt).toBeNull();
    expect(read?.record.holder?.context).toBeUndefined();
  });

  it('keeps keys verbatim: characters URLs and paths treat specially stay distinct', async () => {
    const store = run.store();
    const base = freshKey('chars');
    const suffixes = [
      'a b',
      'a+b',
      'a%20b',
      'q?x=1&y=2',
      'h#frag',
      'ü/🔒/漢字',
      'a//b',
      './dot',
      '../up',
      'tab\tline',
    ];
    const versions = new Map<string, string>();
    for (const suffix of suffixes) {
      versions.set(
        suffix,
        expectOk(await store.write(`${base}/${suffix}`, freeRecord(1, suffix), { absent: true })),
      );
    }
    for (const suffix of suffixes) {
      expect(await store.read(`${base}/${suffix}`)).toMatchObject({
        version: versions.get(suffix),
        record: { data: suffix },
      });
    }
  });

  it('sizes records so that bigger data counts more', () => {
    const store = run.store();
    const small = store.recordBytes(heldRecord(1, {}, 'x'));
    const big = store.recordBytes(heldRecord(1, {}, 'x'.repeat(1000)));
    const unicode = store.recordBytes(heldRecord(1, {}, '€'.repeat(1000)));
    expect(big - small).toBeGreaterThanOrEqual(999);
    expect(unicode).toBeGreaterThan(big);
    expect(store.maxRecordBytes).toBeGreaterThan(big);
  });

  it('checks key length before sending anything', async () => {
    const store = run.store();
    const limit = run.subject().maxKey;
    expect(limit, 'the store under test must state its key limit').toBeDefined();
    if (!limit) return;
    const longest = 'k'.repeat(limit.length);
    store.checkKey(longest);
    expect(() => store.checkKey(`${longest}k`)).toThrow(LockConfigError);
    // The limit is real: a key of exactly that length is stored and read back.
    const version = expectOk(await store.write(longest, freeRecord(1), { absent: true }));
    expect((await store.read(longest))?.version).toBe(version);
    expectOk(await store.delete(longest, version));
    if (limit.unit === 'utf8-bytes') {
      // Three UTF-8 bytes per character: over the limit in bytes, far under it in characters.
      const euros = '€'.repeat(Math.floor(limit.length / 3) + 1);
      expect(() => store.checkKey(euros)).toThrow(LockConfigError);
      store.checkKey('€'.repeat(Math.floor(limit.length / 3)));
    }
  });

  it('reports a corrupted record naming its key and never overwrites it', async () => {
    const store = run.store();
    const subject = run.subject();
    expect(subject.tamper, 'the store under test must be able to tamper').toBeDefined();
    const texts = [
      'not json {',
      '{"latch":1,"rv":3,"token":"seven","writeId":"w","holder":null}',
      '{"latch":99,"rv":3,"token":1,"writeId":"w","holder":null}',
    ];
    for (const text of texts) {
      const key = freshKey('corrupt');
      await subject.tamper!(key, text);
      const error = await store.read(key).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockCorruptedError);
      expect((error as { key: string }).key).toBe(key);
      expect((error as Error).message).toContain(key);

      // A store that sees the old record on a failed condition reports it as corrupted.
      const create = await store.write(key, freeRecord(1), { absent: true }).catch((e: unknown) => e);
      if (create instanceof Error) expect(create).toBeInstanceOf(LockCorruptedError);
      else expect(create).toMatchObject({ ok: false });
      if (store.claim) {
        const claim = store.claim(key, { record: heldRecord(1), expiredBefore: Number.MAX_SAFE_INTEGER });
        await expect(claim).rejects.toBeInstanceOf(LockCorruptedError);
      }
      await expect(store.read(key)).rejects.toBeInstanceOf(LockCorruptedError);
    }
  });
}
