import { LockClient, LockConfigError, LockTimeoutError, memoryStore } from '@latch/core';
import { lockErrorToHttp } from '@latch/core/http';
import express, { type ErrorRequestHandler } from 'express';
import { afterEach, describe, expect, test } from 'vitest';
import { type LockMiddlewareOptions, lock, lockErrorHandler } from '../src/index.js';
import { type Served, serve } from './helpers/serve.js';
import { deferred } from './helpers/wait.js';

const client = new LockClient({ store: memoryStore() });
const key = (req: express.Request) => req.params.id;

describe('lock() options are checked when the middleware is created', () => {
  test.each<[string, unknown, RegExp]>([
    ['no options', undefined, /needs an object/],
    ['no client', { name: 'item', key }, /needs a LockClient/],
    ['no name', { client, key }, /needs a non-empty string naming the resource/],
    ['a name with dots', { client, name: '../item', key }, /letters, digits/],
    [
      'a name with an empty segment',
      { client, name: 'billing//invoice', key },
      /segments separated by single/,
    ],
    ['no key function', { client, name: 'item', key: 'id' }, /needs a function of the request/],
    [
      'an unknown onLocked',
      { client, name: 'item', key, onLocked: 'queue' },
      /'wait', 'reject' or a function/,
    ],
    ['a negative waitMs', { client, name: 'item', key, waitMs: -1 }, /0 or more milliseconds/],
    ['waitMs with reject', { client, name: 'item', key, onLocked: 'reject', waitMs: 500 }, /never waits/],
    ['a zero leaseMs', { client, name: 'item', key, leaseMs: 0 }, /positive number of milliseconds/],
    ['a NaN leaseMs', { client, name: 'item', key, leaseMs: Number.NaN }, /positive number of milliseconds/],
    [
      'a zero retryAfterSeconds',
      { client, name: 'item', key, retryAfterSeconds: 0 },
      /whole number of seconds, at least 1; got 0/,
    ],
    [
      'a fractional retryAfterSeconds',
      { client, name: 'item', key, retryAfterSeconds: 0.5 },
      /lock\(\{ retryAfterSeconds \}\) must be a whole number of seconds/,
    ],
    // The limit is core's to check (the client's checkAcquireOptions): its words, after which lock() it was.
    [
      'a zero limit',
      { client, name: 'item', key, limit: 0 },
      /^lock\(\) for "item": limit must be a whole number from 1 \(a lock\) to 100, got 0\. It is how many may hold the key at once\.$/,
    ],
    [
      'a limit over 100',
      { client, name: 'item', key, limit: 101 },
      /whole number from 1 \(a lock\) to 100, got 101\./,
    ],
    [
      'a fractional limit',
      { client, name: 'item', key, limit: 2.5 },
      /whole number from 1 \(a lock\) to 100, got 2\.5\./,
    ],
    ['a limit given as text', { client, name: 'item', key, limit: '3' }, /to 100, got "3"\./],
    ['an infinite limit', { client, name: 'item', key, limit: Infinity }, /to 100, got Infinity\./],
  ])('%s → LockConfigError', (_what, options, message) => {
    const create = () => lock(options as LockMiddlewareOptions);
    expect(create).toThrow(LockConfigError);
    expect(create).toThrow(message);
  });

  test('accepted forms', () => {
    expect(lock({ client, name: 'billing/invoice-v2', key })).toBeTypeOf('function');
    expect(lock({ client, name: 'item', key, onLocked: 'reject', waitMs: 0, leaseMs: Infinity })).toBeTypeOf(
      'function',
    );
    expect(lock({ client, name: 'item', key, waitMs: Infinity })).toBeTypeOf('function');
    expect(lock({ client, name: 'item', key, limit: 1 })).toBeTypeOf('function');
    expect(lock({ client, name: 'item', key, limit: 100, onLocked: 'reject' })).toBeTypeOf('function');
  });
});

describe('request-time behaviour', () => {
  let served: Served | undefined;
  afterEach(async () => {
    await served?.close();
    served = undefined;
  });

  test('retryAfterSeconds sets the Retry-After of a 423, never above the lease the holder has left', async () => {
    const locks = new LockClient({ store: memoryStore() });
    const app = express();
    const routes = [
      { path: 'long', leaseMs: 60_000, expected: '20' },
      { path: 'short', leaseMs: 5_000, expected: '5' },
    ].map((route) => ({ ...route, gate: deferred(), entered: deferred() }));
    for (const { path, leaseMs, gate, entered } of routes) {
      const guard = lock({
        client: locks,
        name: path,
        key,
        leaseMs,
        onLocked: 'reject',
        retryAfterSeconds: 20,
      });
      app.get(`/${path}/:id`, guard, async (_req, res) => {
        entered.resolve();
        await gate.promise;
        res.end();
      });
    }
    served = await serve(app);
    try {
      for (const { path, expected, gate, entered } of routes) {
        const holder = fetch(`${served.url}/${path}/a`);
        await entered.promise;
        const busy = await fetch(`${served.url}/${path}/a`);
        expect(busy.status).toBe(423);
        expect(busy.headers.get('retry-after')).toBe(expected);
        expect(((await busy.json()) as { retryAfterSeconds: number }).retryAfterSeconds).toBe(
          Number(expected),
        );
        gate.resolve();
        await holder;
      }
    } finally {
      for (const { gate } of routes) gate.resolve();
    }
  });

  test('an onLocked handler gets the timeout error with the holder and answers instead of the 423', async () => {
    const locks = new LockClient({ store: memoryStore() });
    const gate = deferred();
    const entered = deferred();
    const seen: LockTimeoutError[] = [];
    const app = express();
    const guard = lock({
      client: locks,
      name: 'item',
      key,
      leaseMs: 60_000,
      onLocked: (error, _req, res) => {
        seen.push(error);
        const answer = lockErrorToHttp(error)!;
        res.status(409).set('Retry-After', answer.headers['Retry-After']).json({ busy: true });
      },
    });
    app.get('/items/:id', guard, async (_req, res) => {
      entered.resolve();
      await gate.promise;
      res.end();
    });
    served = await serve(app);

    const holder = fetch(`${served.url}/items/a`);
    await entered.promise;
    const busy = await fetch(`${served.url}/items/a`);
    gate.resolve();
    await holder;

    expect(busy.status).toBe(409);
    expect(await busy.json()).toEqual({ busy: true });
    expect(Number(busy.headers.get('retry-after'))).toBeGreaterThan(30);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(LockTimeoutError);
    expect(seen[0]!.holder?.context).toBe('GET item');
  });

  test('a throwing onLocked handler and a throwing key function reach next(err), not a 400', async () => {
    const locks = new LockClient({ store: memoryStore() });
    await locks.acquire('item/held');
    const errors: unknown[] = [];
    const app = express();
    app.get(
      '/items/:id',
      lock({
        client: locks,
        name: 'item',
        key,
        onLocked: async () => {
          throw new Error('handler broke');
        },
      }),
      (_req, res) => res.end(),
    );
    app.get(
      '/broken',
      lock({
        client: locks,
        name: 'item',
        key: () => {
          throw new Error('key broke');
        },
      }),
      (_req, res) => res.end(),
    );
    const recorder: ErrorRequestHandler = (error, _req, res, _next) => {
      errors.push(error);
      res.status(500).end();
    };
    app.use(lockErrorHandler(), recorder);
    served = await serve(app);

    expect((await fetch(`${served.url}/items/held`)).status).toBe(500);
    expect((await fetch(`${served.url}/broken`)).status).toBe(500);
    expect(errors).toEqual([new Error('handler broke'), new Error('key broke')]);
  });
});
