import { S3Client } from '@aws-sdk/client-s3';
import {
  LockClient,
  LockConfigError,
  LockLimitMismatchError,
  LockTimeoutError,
  memoryStore,
  s3ListStore,
} from '@latch/core';
import { lockErrorToHttp } from '@latch/core/http';
import type { Request } from 'express';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { lock } from '../src/index.js';
import { guardedApp, Overlap, replicaClient } from './helpers/apps.js';
import { type Backend, backends } from './helpers/backends.js';
import { type Served, serve } from './helpers/serve.js';
import { deferred, sleep, until } from './helpers/wait.js';

// The tenant a request belongs to is the key: a limit per tenant, whatever route it calls.
const byTenant = (req: Request) => req.params.id;
const LIMIT = 3;
const REQUESTS = 12;

describe.each(backends)('lock({ limit }) over HTTP, two replicas on the $name', ({ start }) => {
  let backend: Backend;
  const servers: Served[] = [];

  beforeEach(async () => {
    backend = await start();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    await backend.stop();
    vi.restoreAllMocks();
  });

  /** Two replicas: separate apps and lock clients over one store, as on two hosts. */
  async function replicas(
    options: Partial<Parameters<typeof lock>[0]>,
    handler: Parameters<typeof guardedApp>[1],
  ): Promise<[string, string]> {
    const urls: string[] = [];
    for (const owner of ['replica-a', 'replica-b']) {
      const client = replicaClient(backend.store, owner);
      const guard = lock({
        client,
        name: 'tenant',
        key: byTenant,
        limit: LIMIT,
        leaseMs: 120_000,
        ...options,
      });
      const served = await serve(guardedApp(guard, handler));
      servers.push(served);
      urls.push(served.url);
    }
    return urls as [string, string];
  }

  test(`under 'wait', ${REQUESTS} parallel requests for one tenant all succeed, ${LIMIT} at a time`, async () => {
    const overlap = new Overlap();
    const [a, b] = await replicas({ onLocked: 'wait', waitMs: 120_000 }, async (req, res) => {
      overlap.enter(req.lock!.fencingToken);
      await sleep(300); // hold long enough for the other holders to come in beside it
      overlap.leave();
      res.json({ token: req.lock!.fencingToken });
    });

    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) => fetch(`${i % 2 ? a : b}/items/acme`)),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(REQUESTS).fill(200));
    // Never more than the limit at once, and the limit was used: more than one at a time.
    expect(overlap.maxActive).toBe(LIMIT);
    // Each request held its own acquisition: a fencing token of its own.
    expect(new Set(overlap.tokens).size).toBe(REQUESTS);
  });

  test(`under 'reject', ${LIMIT} of ${REQUESTS} parallel requests run; the rest get 429 with Retry-After, and another tenant is not limited`, async () => {
    const overlap = new Overlap();
    const gate = deferred();
    let entered = 0;
    const [a, b] = await replicas({ onLocked: 'reject' }, async (req, res) => {
      if (req.params.id === 'acme') {
        overlap.enter(req.lock!.fencingToken);
        entered++;
        await gate.promise; // hold every slot until all the other requests have been answered
        overlap.leave();
      }
      res.json({ tenant: req.params.id });
    });

    let refused = 0;
    const requests = Array.from({ length: REQUESTS }, (_, i) =>
      fetch(`${i % 2 ? a : b}/items/acme`).then(async (response) => {
        if (response.status !== 200) refused++;
        return { response, body: (await response.json()) as Record<string, unknown> };
      }),
    );
    await until(() => entered + refused === REQUESTS, 'every request ran or was refused');

    // While acme's slots are all taken, another tenant goes ahead on either replica.
    for (const url of [a, b]) {
      const other = await fetch(`${url}/items/globex`);
      expect(other.status).toBe(200);
      expect(await other.json()).toEqual({ tenant: 'globex' });
    }

    gate.resolve();
    const results = await Promise.all(requests);
    expect(overlap.maxActive).toBe(LIMIT);
    expect(results.filter((r) => r.response.status === 200)).toHaveLength(LIMIT);
    const limited = results.filter((r) => r.response.status === 429);
    expect(limited).toHaveLength(REQUESTS - LIMIT);
    for (const { response, body } of limited) expectTooManyRequests(response, body);
  });

  test('an onLocked handler gets the timeout error with the limit it met', async () => {
    const gate = deferred();
    let entered = 0;
    const seen: LockTimeoutError[] = [];
    const [a, b] = await replicas(
      {
        onLocked: (error, _req, res) => {
          seen.push(error);
          res.status(503).json({ busy: true });
        },
      },
      async (_req, res) => {
        entered++;
        await gate.promise;
        res.end();
      },
    );

    const holders = Array.from({ length: LIMIT }, (_, i) => fetch(`${i % 2 ? a : b}/items/acme`));
    await until(() => entered === LIMIT, `${LIMIT} requests hold acme`);
    const busy = await fetch(`${b}/items/acme`);
    gate.resolve();
    await Promise.all(holders);

    expect(busy.status).toBe(503);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(LockTimeoutError);
    expect(seen[0]!.limit).toBe(LIMIT);
  });

  test("a replica whose limit differs from the holders' answers 500 lock-limit-mismatch, and logs it once per key and limits", async () => {
    const errorLog = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const gate = deferred();
    let entered = 0;
    const holding: Parameters<typeof guardedApp>[1] = async (_req, res) => {
      entered++;
      await gate.promise;
      res.end();
    };
    // Replica A was deployed with limit 3, replica B with limit 5: one route, two versions.
    const [a] = await replicas({ onLocked: 'reject' }, holding);
    const [b] = await replicas({ onLocked: 'reject', limit: 5 }, holding);
    const held = [fetch(`${a}/items/acme`), fetch(`${a}/items/globex`)];
    await until(() => entered === 2, 'replica A holds acme and globex');

    const mismatched = [];
    for (const path of ['acme', 'acme', 'globex']) mismatched.push(await fetch(`${b}/items/${path}`));
    gate.resolve();
    await Promise.all(held);

    const expected = lockErrorToHttp(new LockLimitMismatchError('tenant/acme', LIMIT, 5, ''))!;
    for (const response of mismatched) {
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toEqual({
        ...expected.body,
        type: 'urn:latch:problem:lock-limit-mismatch',
      });
    }
    expect(entered).toBe(2);
    // The operator learns which key and which limits; a repeat of one mismatch is not logged again.
    const lines = errorLog.mock.calls.map((call) => String(call[0]));
    expect(lines).toEqual([
      expect.stringMatching(
        /^\[latch\] GET \/items\/acme answered 500: lock limit mismatch: Lock "tenant\/acme" is held with limit 3, and this call asked for limit 5\. /,
      ),
      expect.stringMatching(
        /^\[latch\] GET \/items\/globex answered 500: lock limit mismatch: Lock "tenant\/globex" is held with limit 3, and this call asked for limit 5\. /,
      ),
    ]);
  });
});

describe('lock({ limit }) is checked by the client when the middleware is created', () => {
  test('on s3ListStore, which keeps no semaphore, lock({ limit: 2 }) throws before the app serves', () => {
    // Nothing is sent: the endpoint is never reached.
    const sdk = new S3Client({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:1',
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'example' },
    });
    try {
      const client = new LockClient({
        store: s3ListStore({ client: sdk, bucket: 'locks', prefix: 'locks/' }),
      });
      const create = (limit: number) => () => lock({ client, name: 'tenant', key: byTenant, limit });

      expect(create(2)).toThrow(LockConfigError);
      expect(create(2)).toThrow(
        /^lock\(\) for "tenant": limit 2 is not available with the S3 list strategy: .* Use s3Store \(S3 with conditional writes\) or dynamoStore, or leave limit at 1\.$/,
      );
      expect(create(1)).not.toThrow();
    } finally {
      sdk.destroy();
    }
  });

  test("a limit out of range is refused in core's words, naming the lock()", () => {
    const client = new LockClient({ store: memoryStore() });
    expect(() => lock({ client, name: 'tenant', key: byTenant, limit: 101 })).toThrow(
      'lock() for "tenant": limit must be a whole number from 1 (a lock) to 100, got 101.',
    );
  });
});

/** Core's answer to a full semaphore, as every Latch web adapter sends it. */
function expectTooManyRequests(response: Response, body: Record<string, unknown>): void {
  const expected = lockErrorToHttp(new LockTimeoutError('tenant/acme', 0, undefined, { limit: LIMIT }))!;
  expect(expected.status).toBe(429);
  expect(response.status).toBe(429);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(response.headers.get('retry-after')).toBe(expected.headers['Retry-After']);
  expect(body).toEqual(expected.body);
}
