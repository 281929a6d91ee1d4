import { expect } from 'vitest';
import type { Lock } from '../../src/index.js';
import { replica, type scriptedClients } from './scripted-clients.js';

/**
 * Another client holds 'k' and this client has seen it; `plan` scripts the faults. A first
 * caller then tries on its own (failFastOnStoreError: outside the key's queue), a second one
 * waits in the key's queue, and the other client lets go. Returns once the first holds the key.
 */
export async function twoCallersAfterAnother(
  s: ReturnType<typeof scriptedClients>,
  plan: () => void,
  waiterOptions: { leaseMs?: number } = {},
) {
  const other = replica(s);
  const theirs = await other.acquire('k');
  const locks = s.client();
  expect(await locks.tryAcquire('k')).toBeNull(); // this client has seen the record now
  plan();
  let first: Lock | undefined;
  let second: Lock | undefined;
  void locks.acquire('k', { failFastOnStoreError: true }).then((lock) => (first = lock));
  await s.time.advance(1);
  void locks.acquire('k', waiterOptions).then((lock) => (second = lock));
  await s.time.advance(10);
  await theirs.release();
  expect(await s.time.until(() => first !== undefined, 400)).toBe(true);
  return { other, locks, first: first!, second: () => second };
}
