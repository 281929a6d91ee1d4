import { S3Client } from '@aws-sdk/client-s3';
import { type Lock, LockClient, LockStoreError, s3Store } from '@latch/core';
import { type S3Server, startS3Server } from '@latch/testing';
import express, { type ErrorRequestHandler } from 'express';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { lock, lockErrorHandler } from '../src/index.js';
import { PREFIX } from './helpers/backends.js';
import { type Served, serve } from './helpers/serve.js';
import { until } from './helpers/wait.js';

describe('when the S3 lock store fails', () => {
  let s3: S3Server;
  let sdk: S3Client;
  let locks: LockClient;
  let served: Served | undefined;

  beforeEach(async () => {
    s3 = await startS3Server({ bucket: 'locks' });
    // No SDK retries and one quick core retry: failures surface at once.
    sdk = new S3Client({ ...s3.clientConfig(), maxAttempts: 1 });
    locks = new LockClient({
      store: s3Store({ client: sdk, bucket: 'locks', prefix: PREFIX }),
      retry: { attempts: 2, baseMs: 10, maxMs: 20 },
    });
  });
  afterEach(async () => {
    await served?.close();
    served = undefined;
    sdk.destroy();
    await s3.stop();
  });

  test.each(['wait', 'reject'] as const)(
    "under '%s', a store that is down reaches next(err) as a LockStoreError and answers 503",
    async (onLocked) => {
      const seenByErrorHandlers: unknown[] = [];
      let handlerRuns = 0;
      const app = express();
      app.get(
        '/items/:id',
        lock({ client: locks, name: 'item', key: (req) => req.params.id, onLocked }),
        (_req, res) => {
          handlerRuns++;
          res.end();
        },
      );
      const recorder: ErrorRequestHandler = (error, _req, _res, next) => {
        seenByErrorHandlers.push(error);
        next(error);
      };
      app.use(recorder, lockErrorHandler());
      served = await serve(app);

      await s3.stop(); // the store's port is closed now
      const errorLog = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      const response = await fetch(`${served.url}/items/a`);
      const logged = errorLog.mock.calls.map((call) => String(call[0]));
      errorLog.mockRestore();

      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({
        type: 'urn:latch:problem:lock-store-unavailable',
        status: 503,
      });
      expect(seenByErrorHandlers).toHaveLength(1);
      expect(seenByErrorHandlers[0]).toBeInstanceOf(LockStoreError);
      expect(handlerRuns).toBe(0);
      // The operator learns why, on the server: one line by default.
      expect(logged).toEqual([
        expect.stringMatching(
          /^\[latch\] GET \/items\/a answered 503: lock store unavailable \(reason unavailable/,
        ),
      ]);
    },
  );

  test('a release the store refuses is retried until it lands, once', async () => {
    let held: Lock | undefined;
    const app = express();
    app.get('/items/:id', lock({ client: locks, name: 'item', key: (req) => req.params.id }), (req, res) => {
      held = req.lock;
      // The store throttles the next six writes: the release's first attempts fail.
      s3.faults.slowDown({ op: 'PutObject', times: 6 });
      s3.resetRequestLog();
      res.end();
    });
    served = await serve(app);

    expect((await fetch(`${served.url}/items/a`)).status).toBe(200);
    // isHeld turns false as soon as the release starts: wait for the store to show it free.
    expect(held).toBeDefined();
    await until(async () => (await locks.inspect('item/a')).state === 'free', 'the lock is released');

    const writes = s3.requestLog.filter(
      (entry) => entry.op === 'PutObject' && entry.key === `${PREFIX}item/a`,
    );
    expect(writes.filter((entry) => entry.fault === 'slowDown')).toHaveLength(6);
    expect(writes.filter((entry) => entry.status === 200)).toHaveLength(1);
    expect(await locks.inspect('item/a')).toMatchObject({ state: 'free', fencingToken: 1 });
  });
});
