import { S3Client } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Campaign, LockClient, type LockStore, memoryStore, s3Store } from '../src/index.js';

// The lease is a minute, far longer than the test may run: a follower elected before the test
// times out can only have been elected because the leader resigned, not because its lease ran out.
const LEASE_MS = 60_000;

let server: S3Server;
let s3: S3Client;

beforeAll(async () => {
  server = await startS3Server({ bucket: 'elections' });
  s3 = new S3Client(server.clientConfig());
});

afterAll(async () => {
  s3.destroy();
  await server.stop();
});

const stores: Array<[string, () => LockStore]> = [
  ['memory', () => memoryStore()],
  ['S3', () => s3Store({ client: s3, bucket: 'elections', prefix: 'latch/' })],
];

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe.each(stores)('leader election on the %s store', (_name, makeStore) => {
  test('a leader that resigns hands over at once, long before its lease would end', async () => {
    const store = makeStore();
    const key = `election-${Math.random().toString(36).slice(2)}`;
    const terms: Array<{ who: number; token: number; expiresAt: number | null; at: number }> = [];
    const campaigns: Campaign[] = [0, 1, 2].map((who) =>
      new LockClient({ store, leaseMs: LEASE_MS, pollMs: 50 }).campaign(key, {
        onElected: (lock) => {
          terms.push({ who, token: lock.fencingToken, expiresAt: lock.expiresAt, at: Date.now() });
        },
      }),
    );
    await until(() => terms.length === 1);
    const first = terms[0]!;

    await campaigns[first.who]!.stop();
    await until(() => terms.length === 2);
    const second = terms[1]!;

    expect(second.who).not.toBe(first.who);
    expect(second.token).toBe(first.token + 1);
    // The first term's lease still had most of its minute to run when the next term began.
    expect(first.expiresAt).not.toBeNull();
    expect(second.at).toBeLessThan(first.expiresAt! - LEASE_MS / 2);
    await Promise.all(campaigns.map((campaign) => campaign.stop()));
  }, 15_000);
});
