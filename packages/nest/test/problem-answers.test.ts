import { LockClient, type LockStore, LockStoreError, memoryStore } from '@latch/core';
import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import request from 'supertest';
import { afterEach, describe, expect, test } from 'vitest';
import { Locked, LockModule } from '../src/index.js';
import { CapturingLogger } from './helpers/capturing-logger.js';
import { startApp } from './helpers/nest.js';

// Every answer Latch gives is an RFC 9457 problem document, sent as application/problem+json,
// on each Nest major the suite runs against (see vitest.config.ts). Nest 11's ExpressAdapter
// warns "Content-Type doesn't match Reply body" and rewrites the type to application/json when
// an error reply's type does not start with application/json; Nest 12 accepts any +json type.

@Controller()
class Routes {
  @Locked('invoice:{0}', { onLocked: 'throw' })
  @Post('invoices/:id/pay')
  pay(@Param('id') id: string): { paid: string } {
    return { paid: id };
  }

  @Locked('export:{0}', { limit: 2, onLocked: 'throw' })
  @Get('exports/:id')
  exportOf(@Param('id') id: string): { exported: string } {
    return { exported: id };
  }

  @Post('by-body')
  @Locked('invoice:{0.id}', { onLocked: 'throw' })
  byBody(@Body() body: { id?: string }): { paid: string | undefined } {
    return { paid: body.id };
  }
}

/** A store whose every write fails with this error. */
function failingStore(error: () => LockStoreError): LockStore {
  return {
    ...memoryStore(),
    read: async () => {
      throw error();
    },
    write: async () => {
      throw error();
    },
  };
}

interface Scenario {
  name: string;
  status: number;
  store: () => LockStore;
  /** Takes the key the request will meet, when the scenario needs it taken. */
  before?: (store: LockStore) => Promise<unknown>;
  send: (server: unknown) => request.Test;
  /** Latch's own log line, for store failures. */
  latchLogs?: 'warn' | 'error';
}

const scenarios: Scenario[] = [
  {
    name: 'a lock held elsewhere (423)',
    status: 423,
    store: memoryStore,
    before: (store) => new LockClient({ store }).acquire('invoice:1'),
    send: (server) => request(server as never).post('/invoices/1/pay'),
  },
  {
    name: 'every slot of a limit taken (429)',
    status: 429,
    store: memoryStore,
    before: async (store) => {
      const holder = new LockClient({ store });
      await holder.acquire('export:1', { limit: 2 });
      await holder.acquire('export:1', { limit: 2 });
    },
    send: (server) => request(server as never).get('/exports/1'),
  },
  {
    name: 'a key the request cannot build (400)',
    status: 400,
    store: memoryStore,
    send: (server) =>
      request(server as never)
        .post('/by-body')
        .send({ amount: 3 }),
  },
  {
    name: 'a store set up wrong (500)',
    status: 500,
    store: () =>
      failingStore(() => new LockStoreError('no such table', { retryable: false, reason: 'misconfigured' })),
    send: (server) => request(server as never).post('/invoices/2/pay'),
    latchLogs: 'error',
  },
  {
    name: 'a store that is down (503)',
    status: 503,
    store: () =>
      failingStore(
        () => new LockStoreError('connection refused', { retryable: true, reason: 'unavailable' }),
      ),
    send: (server) => request(server as never).post('/invoices/3/pay'),
    latchLogs: 'warn',
  },
];

const apps: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('problem answers', () => {
  test.each(scenarios)(
    '$name: application/problem+json, and nothing but Latch logs a warning',
    async (scenario) => {
      const store = scenario.store();
      await scenario.before?.(store);
      const logger = new CapturingLogger();
      const app = await startApp({ imports: [LockModule.forRoot({ store })], controllers: [Routes] }, logger);
      apps.push(app);

      const response = await scenario.send(app.getHttpServer());

      expect(response.status).toBe(scenario.status);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(JSON.parse(response.text)).toMatchObject({ status: scenario.status, type: expect.any(String) });
      // Nest's own warnings (the ExpressAdapter's "Content-Type doesn't match") must not appear.
      const warnings = logger.entries.filter((e) => e.level === 'warn' && e.context !== 'Latch');
      expect(warnings).toEqual([]);
      expect(logger.latch().map((entry) => entry.level)).toEqual(
        scenario.latchLogs ? [scenario.latchLogs] : [],
      );
    },
  );
});
