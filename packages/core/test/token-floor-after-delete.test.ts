import { describe, expect, test } from 'vitest';
import { scriptedClients } from './helpers/scripted-clients.js';

// Fencing tokens never go back for a client, even when the record is deleted behind Latch's back
// and created again from token 1 by a client that never saw it.

describe('tokens with claims by version, after a deleted record', () => {
  test('a deleted record, recreated by a client that never saw it: the next claim here goes on above the floor this client saw', async () => {
    const s = scriptedClients();
    const a = s.client();
    for (let i = 0; i < 5; i++) await (await a.acquire('k')).release();
    s.scripted.inner.documents.delete('k');
    const other = await s.client().acquire('k');
    expect(other.fencingToken).toBe(1);
    expect(await a.tryAcquire('k')).toBeNull(); // this client sees the record again, at token 1
    await other.release();
    const mine = await a.acquire('k');
    expect(mine.fencingToken).toBeGreaterThan(5);
  });
});
