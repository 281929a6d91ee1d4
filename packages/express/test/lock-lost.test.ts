import { LockClient, LockLostError } from '@latch/core';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { lock } from '../src/index.js';
import { guardedApp } from './helpers/apps.js';
import { type Backend, backends, countReleases } from './helpers/backends.js';
import { type Served, serve } from './helpers/serve.js';
import { deferred } from './helpers/wait.js';

describe.each(backends)('a lock lost mid-request, with the $name', ({ start }) => {
  let backend: Backend;
  let served: Served | undefined;

  beforeEach(async () => {
    backend = await start();
  });
  afterEach(async () => {
    await served?.close();
    served = undefined;
    await backend.stop();
  });

  test('req.lock.signal aborts when another client steals the lock, and the request can answer 409', async () => {
    const counted = countReleases(backend.store);
    const holder = new LockClient({ store: counted.store, owner: 'holder' });
    const operator = new LockClient({ store: backend.store, owner: 'operator' });
    const entered = deferred<number>();
    let reason: unknown;

    // A short lease renews every second: the renewal after the theft finds another owner's write.
    const guard = lock({ client: holder, name: 'item', key: (req) => req.params.id, leaseMs: 3000 });
    served = await serve(
      guardedApp(guard, async (req) => {
        const { signal, fencingToken } = req.lock!;
        entered.resolve(fencingToken);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        reason = signal.reason;
        signal.throwIfAborted(); // what a downstream call given the signal would do
      }),
    );

    const response = fetch(`${served.url}/items/a`);
    expect(await entered.promise).toBe(1);
    expect(await operator.forceRelease('item/a')).toBe(true);

    const answer = await response;
    expect(reason).toBeInstanceOf(LockLostError);
    expect(answer.status).toBe(409);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await answer.json()).toMatchObject({ type: 'urn:latch:problem:lock-lost', status: 409 });
    // The holder never wrote a release over the record it no longer owned.
    expect(counted.releases('item/a')).toBe(0);
    expect(await operator.inspect('item/a')).toMatchObject({ state: 'free', fencingToken: 1 });

    // Nothing leaked: the next request locks normally, with a new fencing token.
    const next = deferred<number>();
    await served.close();
    served = await serve(
      guardedApp(guard, (req, res) => {
        next.resolve(req.lock!.fencingToken);
        res.end();
      }),
    );
    expect((await fetch(`${served.url}/items/a`)).status).toBe(200);
    expect(await next.promise).toBe(2);
  });
});
