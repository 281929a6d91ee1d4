import {
  Body,
  type CanActivate,
  Controller,
  type ExecutionContext,
  ForbiddenException,
  Get,
  HttpCode,
  type INestApplication,
  Injectable,
  Param,
  Post,
  UseGuards,
} from '@nestjs/common';
import request from 'supertest';
import { describe, expect, test } from 'vitest';
import { currentLock, Locked, LockModule, LockService } from '../src/index.js';
import { backends } from './helpers/backends.js';
import { replicasOn } from './helpers/replicas.js';
import { sleep, until } from './helpers/wait.js';

// URLs of the requests the guard let through, i.e. that reached the @Locked handler.
const guardedRequests: string[] = [];

@Injectable()
class ApiKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | undefined>; url: string }>();
    if (req.headers['x-api-key'] !== 'secret') throw new ForbiddenException('x-api-key required');
    guardedRequests.push(req.url);
    return true;
  }
}

@Controller('invoices')
class InvoiceController {
  // Route decorators below @Locked.
  @Locked('invoice:{0}', { onLocked: 'throw' })
  @Post(':id/pay')
  @HttpCode(200)
  pay(@Param('id') id: string): { paid: string; token: number } {
    return { paid: id, token: currentLock()!.fencingToken };
  }

  // Route and guard decorators above @Locked.
  @Get(':id/report')
  @UseGuards(ApiKeyGuard)
  @Locked('report:{0}', { onLocked: 'wait', waitMs: 60_000 })
  async report(@Param('id') id: string): Promise<{ report: string; token: number }> {
    return { report: id, token: currentLock()!.fencingToken };
  }

  @Post('by-body')
  @HttpCode(200)
  @Locked('invoice:{0.id}', { onLocked: 'throw' })
  byBody(@Body() body: { id?: string }): { paid: string | undefined } {
    return { paid: body.id };
  }
}

describe.each(backends)('HTTP routes with @Locked on the $name', ({ start }) => {
  const apps = replicasOn(start);

  async function replica(owner: string): Promise<INestApplication> {
    return apps.start({
      imports: [LockModule.forRoot({ store: apps.store, owner })],
      controllers: [InvoiceController],
      providers: [ApiKeyGuard],
    });
  }

  test("under 'throw', a route answers 423 Locked with Retry-After and a problem+json body while another replica holds the key", async () => {
    const holder = await replica('replica-a');
    const app = await replica('replica-b');
    const held = await holder
      .get(LockService)
      .acquire('invoice:42', { leaseMs: 30_000, context: 'charging 42' });

    const locked = await request(app.getHttpServer()).post('/invoices/42/pay');
    expect(locked.status).toBe(423);
    expect(locked.headers['content-type']).toMatch(/^application\/problem\+json/);
    // The holder is another request: 1 s (retryAfterSeconds' default), not the 30 s its lease has left.
    const retryAfter = Number(locked.headers['retry-after']);
    expect(retryAfter).toBe(1);
    expect(locked.body).toEqual({
      type: 'urn:latch:problem:locked',
      title: 'Locked',
      status: 423,
      detail: expect.any(String),
      retryAfterSeconds: retryAfter,
    });
    // The holder's identity is not exposed.
    expect(locked.text).not.toContain('charging 42');
    expect(locked.text).not.toContain('replica-a');

    await held.release();
    const paid = await request(app.getHttpServer()).post('/invoices/42/pay');
    expect(paid.status).toBe(200);
    expect(paid.body).toEqual({ paid: '42', token: 2 });
  });

  test('route, HTTP code and guard metadata survive @Locked in either order', async () => {
    const app = await replica('replica-a');
    const server = app.getHttpServer();
    // @HttpCode(200) below @Locked still applies (a POST would answer 201 otherwise).
    await request(server).post('/invoices/7/pay').expect(200, { paid: '7', token: 1 });
    // @UseGuards above @Locked still guards the route.
    await request(server).get('/invoices/7/report').expect(403);
    await request(server)
      .get('/invoices/7/report')
      .set('x-api-key', 'secret')
      .expect(200, { report: '7', token: 1 });
  });

  test("under 'wait', a request waits for the other replica's lock and then runs", async () => {
    const holder = await replica('replica-a');
    const app = await replica('replica-b');
    const held = await holder.get(LockService).acquire('report:9');

    guardedRequests.length = 0;
    let answered = false;
    const pending = request(app.getHttpServer())
      .get('/invoices/9/report')
      .set('x-api-key', 'secret')
      .then((res) => {
        answered = true;
        return res;
      });
    // The request passed the guard on replica B and stays unanswered while replica A holds the lock.
    await until(() => guardedRequests.includes('/invoices/9/report'));
    await sleep(300);
    expect(answered).toBe(false);
    await held.release();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ report: '9', token: 2 });
  });

  test('a key that cannot be built from the request answers 400 with a problem+json body', async () => {
    const app = await replica('replica-a');
    const res = await request(app.getHttpServer()).post('/invoices/by-body').send({ amount: 3 });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: 'urn:latch:problem:invalid-lock-key', status: 400 });
    expect(res.body.detail).toContain("'invoice:{0.id}'");

    await request(app.getHttpServer())
      .post('/invoices/by-body')
      .send({ id: 'x-1' })
      .expect(200, { paid: 'x-1' });
  });
});
