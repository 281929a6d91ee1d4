// The optional listing: every key under a prefix once, page by page, each with the record `read`
// returns (or left for the caller to read), unreadable records reported, nothing else listed.
import { expect, it } from 'vitest';
import { type ContractRun, expectOk, freshKey } from './contract-run.js';
import { freeRecord, heldRecord } from './records.js';
import type { ListedKeyShape, StoreUnderContract, VersionedRecordShape } from './store-shapes.js';

/** `offers list` (or `offers no list`), and with `list`, the cases of list itself. */
export function listContractCases(run: ContractRun, offered: boolean): void {
  it(offered ? 'offers list' : 'offers no list', () => {
    expect(typeof run.store().list).toBe(offered ? 'function' : 'undefined');
  });
  if (!offered) return;

  /** Every key of every page under `prefix`, following the cursors to the last page. */
  const listAll = async (prefix: string): Promise<ListedKeyShape[]> => {
    const list: NonNullable<StoreUnderContract['list']> = (...args) => run.store().list!(...args);
    const found: ListedKeyShape[] = [];
    let cursor: string | undefined;
    for (let pages = 1; ; pages++) {
      const page = await list(prefix, cursor);
      found.push(...page.keys);
      if (page.cursor === undefined) return found;
      expect(page.cursor, 'a cursor that moves on').not.toBe(cursor);
      expect(pages, 'a listing of a few keys that ends').toBeLessThan(1000);
      cursor = page.cursor;
    }
  };
  const keysOf = (found: ListedKeyShape[]) => found.map((entry) => entry.key).sort();

  it('lists every key that starts with the prefix once, with the record read returns', async () => {
    const store = run.store();
    // Ends in a name of its own: no other test's key starts with it.
    const base = `${freshKey('list')}/k`;
    const written = new Map<string, VersionedRecordShape>();
    const records = {
      a: freeRecord(3, { n: 1 }),
      b: freeRecord(1),
      'b/c': heldRecord(7),
      'b/ü🔒': heldRecord(2),
    };
    for (const [name, record] of Object.entries(records)) {
      const key = `${base}/${name}`;
      written.set(key, { version: expectOk(await store.write(key, record, { absent: true })), record });
    }
    // Starts with `base` but not with `base/`.
    expectOk(await store.write(`${base}-other`, freeRecord(1), { absent: true }));

    const found = await listAll(`${base}/`);
    expect(keysOf(found)).toEqual([...written.keys()].sort());
    for (const entry of found) {
      expect(entry.error).toBeUndefined();
      // A record the listing carries is the one read returns; without one, the caller reads it.
      if (entry.current !== undefined) expect(entry.current).toEqual(written.get(entry.key));
      expect(await store.read(entry.key)).toEqual(written.get(entry.key));
    }
    expect(keysOf(await listAll(`${base}/b`))).toEqual([`${base}/b`, `${base}/b/c`, `${base}/b/ü🔒`]);
    expect(keysOf(await listAll(`${base}/b/`))).toEqual([`${base}/b/c`, `${base}/b/ü🔒`]);
    expect(keysOf(await listAll(base))).toEqual([`${base}-other`, ...written.keys()].sort());
    expect(await listAll(`${base}/none`)).toEqual([]);
  });

  it('leaves out a deleted key', async () => {
    const store = run.store();
    const base = freshKey('list-deleted');
    const version = expectOk(await store.write(`${base}/gone`, freeRecord(1), { absent: true }));
    expectOk(await store.write(`${base}/kept`, freeRecord(1), { absent: true }));
    expectOk(await store.delete(`${base}/gone`, version));
    expect(keysOf(await listAll(`${base}/`))).toEqual([`${base}/kept`]);
  });

  it('lists a record it cannot read with a LockCorruptedError naming its key, or for the caller to read', async () => {
    const subject = run.subject();
    expect(subject.tamper, 'the store under test must be able to tamper').toBeDefined();
    const key = `${freshKey('list-corrupt')}/bad`;
    await subject.tamper!(key, 'not json {');
    const found = await listAll(key);
    expect(found.map((entry) => entry.key)).toEqual([key]);
    const [entry] = found;
    expect(entry!.current).toBeUndefined();
    if (entry!.error === undefined) {
      await expect(run.store().read(key)).rejects.toBeInstanceOf(run.latch.LockCorruptedError);
    } else {
      expect(entry!.error).toBeInstanceOf(run.latch.LockCorruptedError);
      expect((entry!.error as Error & { key: string }).key).toBe(key);
    }
  });
}
