import { type Lock, LockClient } from '@latch/core';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import express4 from 'express4';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { lock, lockErrorHandler } from '../src/index.js';
import { type Backend, backends, countReleases } from './helpers/backends.js';
import { type Served, serve } from './helpers/serve.js';
import { deferred, sleep, until } from './helpers/wait.js';

const frameworks = [
  { framework: 'Express 5', createApp: express, catchesAsyncErrors: true },
  { framework: 'Express 4', createApp: express4, catchesAsyncErrors: false },
];

describe.each(backends)('release with the $name', ({ start }) => {
  describe.each(frameworks)('on $framework', ({ createApp, catchesAsyncErrors }) => {
    let backend: Backend;
    let releases: (key: string) => number;
    let locks: LockClient;
    let served: Served | undefined;
    const key = 'item/a';

    beforeEach(async () => {
      backend = await start();
      const counted = countReleases(backend.store);
      releases = counted.releases;
      locks = new LockClient({ store: counted.store, pollMs: 50 });
    });
    afterEach(async () => {
      await served?.close();
      served = undefined;
      await backend.stop();
    });

    /** `GET /items/:id` guarded by lock(), then `handler`; errors end in a plain 500. */
    async function start_(handler: RequestHandler, onLocked: 'wait' | 'reject' = 'reject') {
      const errors: unknown[] = [];
      const seen = { arrivals: 0, closes: 0 };
      const app = createApp();
      app.use((_req, res, next) => {
        seen.arrivals++;
        res.on('close', () => seen.closes++);
        next();
      });
      const guard = lock({ client: locks, name: 'item', key: (req) => req.params.id, onLocked });
      app.get('/items/:id', guard, handler);
      app.use(lockErrorHandler());
      const lastResort: ErrorRequestHandler = (error, _req, res, _next) => {
        errors.push(error);
        res.status(500).json({ error: String(error) });
      };
      app.use(lastResort);
      served = await serve(app);
      return { url: served.url, errors, seen };
    }

    async function expectReleasedOnce(held: Lock): Promise<void> {
      await until(async () => (await locks.inspect(key)).state === 'free', 'the lock is free');
      expect(releases(key)).toBe(1);
      expect(held.isHeld).toBe(false);
    }

    test('releases once when the response finishes', async () => {
      let held: Lock | undefined;
      let closed = false;
      const { url } = await start_((req, res) => {
        held = req.lock;
        expect(held?.isHeld).toBe(true);
        res.on('close', () => {
          closed = true;
        });
        res.json({ token: req.lock!.fencingToken });
      });

      const response = await fetch(`${url}/items/a`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ token: 1 });
      await expectReleasedOnce(held!);
      // Node emits 'close' after 'finish': that second end of the response must not release again.
      await until(() => closed, "the response's close event");
      expect(releases(key)).toBe(1);

      // Not leaked: the next request gets the lock at once (under 'reject').
      expect((await fetch(`${url}/items/a`)).status).toBe(200);
    });

    test('releases once when the client disconnects mid-request', async () => {
      const entered = deferred<Lock>();
      const closed = deferred();
      const { url } = await start_((req, res) => {
        res.on('close', () => closed.resolve());
        entered.resolve(req.lock!);
        // Never answers: only the client going away ends this request.
      });

      const client = new AbortController();
      const request = fetch(`${url}/items/a`, { signal: client.signal });
      const held = await entered.promise;
      expect(held.isHeld).toBe(true);
      client.abort();
      await expect(request).rejects.toThrow();

      await closed.promise;
      await expectReleasedOnce(held);
    });

    test('a client that leaves while waiting never takes the lock', async () => {
      const gate = deferred();
      const entered = deferred();
      let handlerRuns = 0;
      const { url, seen } = await start_(async (_req, res) => {
        handlerRuns++;
        entered.resolve();
        await gate.promise;
        res.json({ ok: true });
      }, 'wait');

      const holder = fetch(`${url}/items/a`);
      await entered.promise;
      const client = new AbortController();
      const waiter = fetch(`${url}/items/a`, { signal: client.signal });
      await until(() => seen.arrivals === 2, 'the second request reached the app');
      await sleep(50); // most likely queued behind the holder by now; leaving earlier must end the same way
      client.abort();
      await expect(waiter).rejects.toThrow();
      await until(() => seen.closes === 1, 'the server saw the waiting client leave');
      gate.resolve();
      expect((await holder).status).toBe(200);

      await until(async () => (await locks.inspect(key)).state === 'free', 'the lock is free');
      // Had the departed waiter been handed the lock, there would be a second token and handler run.
      expect((await locks.inspect(key)).fencingToken).toBe(1);
      expect(handlerRuns).toBe(1);
      expect(releases(key)).toBe(1);
    });

    test('releases once when the handler throws', async () => {
      let held: Lock | undefined;
      const { url, errors } = await start_((req) => {
        held = req.lock;
        throw new Error('handler failed');
      });

      const response = await fetch(`${url}/items/a`);
      expect(response.status).toBe(500);
      expect(errors).toEqual([new Error('handler failed')]);
      await expectReleasedOnce(held!);
    });

    test('releases once when the handler passes an error to next()', async () => {
      let held: Lock | undefined;
      const { url, errors } = await start_((req, _res, next) => {
        held = req.lock;
        setImmediate(() => next(new Error('failed later')));
      });

      const response = await fetch(`${url}/items/a`);
      expect(response.status).toBe(500);
      expect(errors).toEqual([new Error('failed later')]);
      await expectReleasedOnce(held!);
    });

    // Express 4 does not catch a rejected handler promise, so this is an Express 5 case only.
    if (catchesAsyncErrors)
      test('releases once when an async handler rejects', async () => {
        let held: Lock | undefined;
        const { url, errors } = await start_(async (req) => {
          held = req.lock;
          await new Promise((resolve) => setImmediate(resolve));
          throw new Error('async handler failed');
        });

        const response = await fetch(`${url}/items/a`);
        expect(response.status).toBe(500);
        expect(errors).toEqual([new Error('async handler failed')]);
        await expectReleasedOnce(held!);
      });
  });
});
