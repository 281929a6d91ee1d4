import { randomUUID } from 'node:crypto';
import { LockStoreError } from '../shared/errors.js';
import type { StoreCheck, StoreVerdict } from './store-verdict.js';
import { VERIFY_KEY_PREFIX } from './verify-store.js';

/** The plain object requests the list strategy makes, as the probe needs them. */
export interface ProbedObjects {
  put(objectKey: string, body: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
  get(objectKey: string): Promise<string | null>;
  delete(objectKey: string): Promise<void>;
}

/** Names the probe uploads, out of order: the listing must give them back sorted. */
const NAMES = ['0002', '0010', '0001', '0100', '0003'];

/**
 * Checks what the list strategy relies on: a listing names every object uploaded before it, in
 * key order, and no object deleted before it; a read sees the upload before it. About 17 requests.
 */
export async function verifyListing(objects: ProbedObjects, kind: string): Promise<StoreVerdict> {
  let requests = 0;
  const counted = <R>(request: Promise<R>) => {
    requests++;
    return request;
  };
  const prefix = `${VERIFY_KEY_PREFIX}${randomUUID()}/`;
  const checks: StoreCheck[] = [];
  const check = (name: string, ok: boolean, passed: string, failed: string) =>
    checks.push({ name, outcome: ok ? 'passed' : 'failed', safety: true, detail: ok ? passed : failed });
  try {
    for (const name of NAMES) await counted(objects.put(prefix + name, name));
    const listed = await counted(objects.list(prefix));
    const names = listed.map((key) => key.slice(prefix.length));
    check(
      'list-after-write',
      NAMES.every((name) => names.includes(name)),
      'a listing named every object uploaded before it.',
      `a listing right after ${NAMES.length} uploads named ${names.length} of them: listings lag behind writes, so two contenders could each miss the other.`,
    );
    const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    check(
      'list-order',
      names.every((name, i) => name === sorted[i]),
      'a listing gave the objects in key order.',
      `a listing gave the objects as ${names.join(', ')}, not in key order: the earliest contender cannot be told.`,
    );
    const body = await counted(objects.get(prefix + NAMES[0]!));
    check(
      'read-after-write',
      body === NAMES[0],
      'a read right after an upload saw it.',
      'a read right after an upload did not see it: reads lag behind writes.',
    );
    await counted(objects.delete(prefix + NAMES[0]!));
    const after = (await counted(objects.list(prefix))).map((key) => key.slice(prefix.length));
    check(
      'list-after-delete',
      !after.includes(NAMES[0]!),
      'a listing right after a delete no longer named the object.',
      'a listing right after a delete still named the object: a released lock would look held.',
    );
  } finally {
    for (const name of NAMES.slice(1)) {
      await counted(objects.delete(prefix + name)).catch((error: unknown) => {
        if (!(error instanceof LockStoreError)) throw error;
      });
    }
  }
  return {
    store: kind,
    safe: checks.every((c) => c.outcome === 'passed'),
    checks,
    clock: undefined,
    requests,
  };
}
