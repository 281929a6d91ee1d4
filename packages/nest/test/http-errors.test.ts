import { LockClient, type LockStore, LockStoreError, memoryStore } from '@latch/core';
import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import request from 'supertest';
import { afterEach, expect, test } from 'vitest';
import { currentLock, Locked, LockModule } from '../src/index.js';
import { startApp } from './helpers/nest.js';
import { until } from './helpers/wait.js';

const store = memoryStore();

@Controller('jobs')
class JobController {
  // Works until its lock is taken away, then returns as if nothing happened.
  @Locked('job:{0}', { onLocked: 'throw', leaseMs: 1000 })
  @Post(':id/run')
  @HttpCode(200)
  async run(@Param('id') _id: string): Promise<{ done: true }> {
    const lock = currentLock()!;
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    return { done: true };
  }
}

const apps: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

test('a lock lost while the handler ran answers 409 with a problem body, even though the handler returned', async () => {
  const app = await startApp({ imports: [LockModule.forRoot({ store })], controllers: [JobController] });
  apps.push(app);
  const answer = request(app.getHttpServer()).post('/jobs/7/run');
  const operator = new LockClient({ store });
  const started = answer.then((r) => r); // send now
  await until(async () => (await operator.inspect('job:7')).state === 'held');
  await operator.forceRelease('job:7');
  const response = await started;
  expect(response.status).toBe(409);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status: 409 });
});

test('a lock store that is down answers 503 with Retry-After', async () => {
  const refused = () => new LockStoreError('connection refused', { retryable: true, reason: 'unavailable' });
  const down: LockStore = {
    ...memoryStore(),
    read: async () => {
      throw refused();
    },
    write: async () => {
      throw refused();
    },
  };
  const app = await startApp({
    imports: [LockModule.forRoot({ store: down })],
    controllers: [JobController],
  });
  apps.push(app);
  const response = await request(app.getHttpServer()).post('/jobs/8/run');
  expect(response.status).toBe(503);
  expect(response.headers['retry-after']).toBe('1');
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
});

test('a store failure of unknown kind that retrying will not cure answers 500 lock-store-failed, without Retry-After', async () => {
  const broken: LockStore = {
    ...memoryStore(),
    write: async () => {
      throw new LockStoreError('the store broke', { retryable: false });
    },
  };
  const app = await startApp({
    imports: [LockModule.forRoot({ store: broken })],
    controllers: [JobController],
  });
  apps.push(app);
  const response = await request(app.getHttpServer()).post('/jobs/9/run');
  expect(response.status).toBe(500);
  expect(response.headers['retry-after']).toBeUndefined();
  expect(response.body).toMatchObject({ type: 'urn:latch:problem:lock-store-failed', status: 500 });
  expect(response.text).not.toContain('the store broke');
});
