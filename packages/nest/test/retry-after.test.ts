import { LockClient, type LockStore, memoryStore } from '@latch/core';
import { Controller, Param, Post } from '@nestjs/common';
import request from 'supertest';
import { afterEach, expect, test } from 'vitest';
import { Locked, LockModule } from '../src/index.js';
import { checkLockedOptions } from '../src/locked-options.js';
import { startApp } from './helpers/nest.js';

// A 423's Retry-After is how long a client should wait before trying again. On a route the
// holder is another request, which ends long before its lease would: 1 s by default, or the
// method's (or module's) retryAfterSeconds; never more than the holder's lease has left.

@Controller()
class Routes {
  @Locked('default:{0}', { onLocked: 'throw' })
  @Post('default/:id')
  plain(@Param('id') id: string): string {
    return id;
  }

  @Locked('twenty:{0}', { onLocked: 'throw', retryAfterSeconds: 20 })
  @Post('twenty/:id')
  twenty(@Param('id') id: string): string {
    return id;
  }
}

const apps: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function retryAfterOf(path: string, heldKey: string, leaseMs: number, store: LockStore, defaults = {}) {
  const holder = await new LockClient({ store }).acquire(heldKey, { leaseMs });
  const app = await startApp({ imports: [LockModule.forRoot({ store, defaults })], controllers: [Routes] });
  apps.push(app);
  try {
    const response = await request(app.getHttpServer()).post(path);
    expect(response.status).toBe(423);
    expect(response.body.retryAfterSeconds).toBe(Number(response.headers['retry-after']));
    return response.headers['retry-after'];
  } finally {
    await holder.release();
  }
}

test('a 423 says Retry-After: 1 by default, whatever the lease the holder has left', async () => {
  expect(await retryAfterOf('/default/1', 'default:1', 60_000, memoryStore())).toBe('1');
});

test("the method's retryAfterSeconds, capped by the lease the holder has left", async () => {
  expect(await retryAfterOf('/twenty/1', 'twenty:1', 60_000, memoryStore())).toBe('20');
  expect(await retryAfterOf('/twenty/2', 'twenty:2', 5_000, memoryStore())).toBe('5');
});

test("the module's default retryAfterSeconds applies to methods without their own", async () => {
  expect(await retryAfterOf('/default/2', 'default:2', 60_000, memoryStore(), { retryAfterSeconds: 7 })).toBe(
    '7',
  );
  expect(await retryAfterOf('/twenty/3', 'twenty:3', 60_000, memoryStore(), { retryAfterSeconds: 7 })).toBe(
    '20',
  );
});

test('a retryAfterSeconds that is not a whole number of seconds, at least 1, is refused', () => {
  for (const bad of [0, 0.5, -1, '5']) {
    expect(() => checkLockedOptions({ retryAfterSeconds: bad }, 'Routes.plain')).toThrow(
      /@Locked\(\) on Routes\.plain: retryAfterSeconds must be a whole number of seconds, at least 1/,
    );
  }
});
