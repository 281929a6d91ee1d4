import { LockClient, VERIFY_KEY_PREFIX } from '@latch/core';
import express from 'express';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { lock, lockErrorHandler } from '../src/index.js';
import { routeLockKey } from '../src/route-key.js';
import { type Backend, backends, PREFIX } from './helpers/backends.js';
import { getRaw, type Served, serve } from './helpers/serve.js';
import { deferred } from './helpers/wait.js';

/** Request values that try to leave their namespace, or to look like another value. */
const attacks = [
  '../payment/1',
  '..',
  '.',
  'payment/1',
  '/payment/1',
  '%2Fpayment%2F1',
  '..%2F..%2Fpayment%2F1',
  'a/../../payment/1',
  '..\\payment\\1',
  'x\u0000y',
  'a%2Fb',
  'a/b',
  "!~*'()",
  ' spaced out ',
  'é漢字🙂',
];

// Lock keys the middleware builds: the namespace, then one segment of [A-Za-z0-9_%-].
const SHAPE = /^invoice\/[A-Za-z0-9_%-]+$/;

describe('routeLockKey', () => {
  test('escapes every request value into one opaque segment under the namespace', () => {
    for (const value of attacks) {
      const key = routeLockKey('invoice', value);
      expect(key).toMatch(SHAPE);
      expect(key).not.toContain('..');
      // One to one: the segment decodes back to exactly the value it came from.
      expect(decodeURIComponent(key.slice('invoice/'.length))).toBe(value);
    }
    expect(new Set(attacks.map((value) => routeLockKey('invoice', value))).size).toBe(attacks.length);
  });
});

describe.each(backends)('keys from untrusted input, with the $name', ({ start }) => {
  let backend: Backend;
  let locks: LockClient;
  let served: Served;
  let handlerKeys: string[];
  let paymentGate: ReturnType<typeof deferred<void>>;
  let paymentEntered: ReturnType<typeof deferred<void>>;

  beforeEach(async () => {
    backend = await start();
    locks = new LockClient({ store: backend.store });
    handlerKeys = [];
    paymentGate = deferred();
    paymentEntered = deferred();
    const app = express();
    app.use(express.json());
    const invoice = lock({ client: locks, name: 'invoice', key: (req) => req.params.id, onLocked: 'reject' });
    app.get('/invoices/:id', invoice, (req, res) => {
      handlerKeys.push(req.lock!.key);
      res.json({ key: req.lock!.key });
    });
    app.get(
      '/payments/:id',
      lock({ client: locks, name: 'payment', key: (req) => req.params.id, onLocked: 'reject' }),
      async (_req, res) => {
        paymentEntered.resolve();
        await paymentGate.promise;
        res.end();
      },
    );
    app.get('/search', lock({ client: locks, name: 'invoice', key: (req) => req.query.id }), (req, res) => {
      handlerKeys.push(req.lock!.key);
      res.end();
    });
    app.post(
      '/invoices',
      lock({ client: locks, name: 'invoice', key: (req) => req.body?.id }),
      (req, res) => {
        handlerKeys.push(req.lock!.key);
        res.end();
      },
    );
    app.use(lockErrorHandler());
    served = await serve(app);
  });
  afterEach(async () => {
    paymentGate.resolve();
    await served.close();
    await backend.stop();
  });

  test("values from the request cannot reach another route's lock or leave their namespace", async () => {
    // Another route holds payment/1 for the whole test: reaching it would answer 423.
    const payment = fetch(`${served.url}/payments/1`);
    await paymentEntered.promise;

    for (const value of attacks) {
      const response = await getRaw(served.url, `/invoices/${encodeURIComponent(value)}`);
      expect(response.status, value).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ key: routeLockKey('invoice', value) });
    }
    expect(handlerKeys).toHaveLength(attacks.length);
    for (const key of handlerKeys) expect(key).toMatch(SHAPE);

    paymentGate.resolve();
    expect((await payment).status).toBe(200);
    expect(await storedKeys()).toEqual(
      new Set(['payment/1', ...attacks.map((value) => routeLockKey('invoice', value))]),
    );
  });

  test('look-alike values do not share a lock', async () => {
    const gate = deferred();
    const app = express();
    const guard = lock({ client: locks, name: 'invoice', key: (req) => req.params.id, onLocked: 'reject' });
    app.get('/invoices/:id', guard, async (_req, res) => {
      await gate.promise;
      res.end();
    });
    const other = await serve(app);
    try {
      // 'a/b' and the literal text 'a%2Fb' are different invoices: both lock at once.
      const pending = ['a/b', 'a%2Fb', 'a.b', 'a%2Eb'].map((id) =>
        fetch(`${other.url}/invoices/${encodeURIComponent(id)}`),
      );
      await expectHeld(['a/b', 'a%2Fb', 'a.b', 'a%2Eb']);
      gate.resolve();
      expect((await Promise.all(pending)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    } finally {
      gate.resolve();
      await other.close();
    }
  });

  test('an over-long key answers 400 before any store request, and the handler does not run', async () => {
    backend.s3?.resetRequestLog();
    const response = await fetch(`${served.url}/invoices/${'x'.repeat(5000)}`);

    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'urn:latch:problem:invalid-lock-key', status: 400 });
    expect(body.detail).toMatch(/at most/);
    expect(handlerKeys).toEqual([]);
    expect(backend.s3?.requestLog ?? []).toEqual([]);
  });

  test.each([
    ['a missing query parameter', '/search'],
    ['a repeated query parameter', '/search?id=a&id=b'],
    ['an empty query parameter', '/search?id='],
  ])('%s answers 400', async (_what, path) => {
    const response = await fetch(`${served.url}${path}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      type: 'urn:latch:problem:invalid-lock-key',
      detail: expect.stringContaining('must be a non-empty string'),
    });
    expect(handlerKeys).toEqual([]);
  });

  test('a key with a lone UTF-16 surrogate (possible in JSON bodies) answers 400', async () => {
    const response = await fetch(`${served.url}/invoices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"id":"abc\\ud800"}',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ detail: expect.stringContaining('lone UTF-16 surrogate') });
    expect(handlerKeys).toEqual([]);
  });

  async function expectHeld(ids: string[]): Promise<void> {
    for (const id of ids) {
      const key = routeLockKey('invoice', id);
      for (;;) {
        const info = await locks.inspect(key);
        if (info.state === 'held') break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  }

  /** Every lock key the store has a record for. */
  async function storedKeys(): Promise<Set<string>> {
    if (!backend.s3)
      return new Set((backend.store as unknown as { documents: Map<string, unknown> }).documents.keys());
    // The store's check on first use writes (and removes) its own records: not lock keys.
    const keys = backend.s3.requestLog.flatMap((entry) =>
      entry.op === 'PutObject' &&
      entry.status === 200 &&
      entry.key &&
      !entry.key.startsWith(PREFIX + VERIFY_KEY_PREFIX)
        ? [entry.key]
        : [],
    );
    for (const key of keys) expect(key.startsWith(PREFIX)).toBe(true);
    return new Set(keys.map((key) => key.slice(PREFIX.length)));
  }
});
