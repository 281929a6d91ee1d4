import type { Request } from 'express';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { lock } from '../src/index.js';
import { guardedApp, Overlap, replicaClient } from './helpers/apps.js';
import { type Backend, backends } from './helpers/backends.js';
import { type Served, serve } from './helpers/serve.js';
import { deferred, sleep, until } from './helpers/wait.js';

const byId = (req: Request) => req.params.id;

describe.each(backends)('mutual exclusion over HTTP with the $name', ({ start }) => {
  let backend: Backend;
  const servers: Served[] = [];

  beforeEach(async () => {
    backend = await start();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    await backend.stop();
  });

  /** Two replicas: separate apps and lock clients over one store, as on two hosts. */
  async function replicas(
    options: Partial<Parameters<typeof lock>[0]>,
    handler: Parameters<typeof guardedApp>[1],
  ) {
    const urls: string[] = [];
    for (const owner of ['replica-a', 'replica-b']) {
      const client = replicaClient(backend.store, owner);
      const served = await serve(guardedApp(lock({ client, name: 'item', key: byId, ...options }), handler));
      servers.push(served);
      urls.push(served.url);
    }
    return urls as [string, string];
  }

  test("under 'wait', 20 parallel requests for one key all succeed, strictly one at a time", async () => {
    const overlap = new Overlap();
    const [a, b] = await replicas({ onLocked: 'wait', waitMs: 120_000 }, async (req, res) => {
      overlap.enter(req.lock!.fencingToken);
      await sleep(5); // hold the lock across a few event-loop turns, so overlaps would show
      overlap.leave();
      res.json({ token: req.lock!.fencingToken });
    });

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => fetch(`${i % 2 ? a : b}/items/report-1`)),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(overlap.maxActive).toBe(1);
    // Each handler ran under its own acquisition, in fencing-token order (a replica that passes
    // the lock among its own requests takes reserved tokens, so the other one's start higher).
    expect(overlap.tokens).toHaveLength(20);
    for (let i = 1; i < 20; i++) expect(overlap.tokens[i]).toBeGreaterThan(overlap.tokens[i - 1]!);
  });

  test("under 'reject', exactly one of 20 parallel requests proceeds; the rest get 423 with Retry-After", async () => {
    const gate = deferred();
    let ran = 0;
    const client = replicaClient(backend.store, 'replica-a');
    const served = await serve(
      guardedApp(
        lock({ client, name: 'item', key: byId, onLocked: 'reject', leaseMs: 120_000 }),
        async (_req, res) => {
          ran++;
          await gate.promise; // hold the lock until every other request has been answered
          res.json({ ok: true });
        },
      ),
    );
    servers.push(served);

    let answered = 0;
    const requests = Array.from({ length: 20 }, () =>
      fetch(`${served.url}/items/report-1`).then(async (response) => {
        answered++;
        return { response, body: (await response.json()) as Record<string, unknown> };
      }),
    );
    await until(() => answered === 19, '19 requests were answered');
    gate.resolve();
    const results = await Promise.all(requests);

    expect(ran).toBe(1);
    expect(results.filter((r) => r.response.status === 200)).toHaveLength(1);
    const locked = results.filter((r) => r.response.status === 423);
    expect(locked).toHaveLength(19);
    for (const { response, body } of locked) expectLockedAnswer(response, body);
  });

  test.each([
    [
      'a request on another replica gets 423 with the Retry-After of the holding replica',
      { onLocked: 'reject' },
    ],
    [
      "under 'wait', a request that waits past waitMs gets 423 with Retry-After",
      { onLocked: 'wait', waitMs: 300 },
    ],
  ] as const)('%s', async (_name, whenLocked) => {
    const gate = deferred();
    const entered = deferred();
    const [a, b] = await replicas({ ...whenLocked, leaseMs: 120_000 }, async (_req, res) => {
      entered.resolve();
      await gate.promise;
      res.json({ ok: true });
    });

    const holder = fetch(`${a}/items/report-1`);
    await entered.promise;
    const refused = await fetch(`${b}/items/report-1`);
    gate.resolve();

    expect((await holder).status).toBe(200);
    expectLockedAnswer(refused, (await refused.json()) as Record<string, unknown>);
  });

  test('requests for different keys run at the same time', async () => {
    const keys = ['a', 'b', 'c'];
    const arrived = new Set<string>();
    const allArrived = deferred();
    const [a, b] = await replicas({ onLocked: 'wait', waitMs: 120_000 }, async (req, res) => {
      arrived.add(String(req.params.id));
      if (arrived.size === keys.length) allArrived.resolve();
      // A barrier: each handler waits for the others while holding its lock. Were the keys
      // serialised, the first handler would give up here and report it was alone.
      const met = await Promise.race([allArrived.promise.then(() => true), sleep(20_000).then(() => false)]);
      res.json({ met });
    });

    const bodies = await Promise.all(
      keys.map((key, i) => fetch(`${i % 2 ? a : b}/items/${key}`).then((r) => r.json())),
    );
    expect(bodies).toEqual(keys.map(() => ({ met: true })));
  });
});

function expectLockedAnswer(response: Response, body: Record<string, unknown>): void {
  expect(response.status).toBe(423);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const retryAfter = response.headers.get('retry-after');
  // The holder is another request: 1 s (retryAfterSeconds' default), not the 120 s its lease has left.
  expect(retryAfter).toBe('1');
  expect(body).toMatchObject({
    type: 'urn:latch:problem:locked',
    status: 423,
    retryAfterSeconds: Number(retryAfter),
  });
}
