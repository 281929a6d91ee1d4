import { readFileSync } from 'node:fs';
import { startS3Server } from '@latch/testing';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AppModule, ReportJob } from '../examples/invoice-app.js';
import { LockService } from '../src/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = readFileSync(new URL('../examples/invoice-app.ts', import.meta.url), 'utf8').trim();

test('README shows examples/invoice-app.ts exactly as tested', () => {
  expect(readme).toContain(example);
});

describe('the README example module, as two replicas on one bucket', () => {
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let replicas: INestApplication[];
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    s3 = await startS3Server({ bucket: 'example-locks' });
    // The example reads its configuration from the environment, as in production.
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      S3_ENDPOINT: s3.endpoint,
      LOCK_BUCKET: 'example-locks',
    });
    replicas = [];
    for (let i = 0; i < 2; i++) {
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      replicas.push(app);
    }
  });
  afterAll(async () => {
    await Promise.all(replicas.map((app) => app.close()));
    await s3.stop();
    process.env = savedEnv;
  });

  test('paying an invoice that another replica is paying answers 423; afterwards it succeeds', async () => {
    const [a, b] = replicas as [INestApplication, INestApplication];
    const held = await a.get(LockService).acquire('invoice:42');

    const refused = await request(b.getHttpServer()).post('/invoices/42/pay');
    expect(refused.status).toBe(423);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);

    await held.release();
    await request(b.getHttpServer()).post('/invoices/42/pay').expect(200, { result: 'paid 42 (token 2)' });
    await request(a.getHttpServer()).get('/invoices/42/lock').expect(200, { state: 'free', fencingToken: 2 });
    expect(s3.requestLog.some((entry) => entry.key === 'locks/invoice:42' && entry.op === 'PutObject')).toBe(
      true,
    );
  });

  test('exports run 3 at a time per customer across replicas: a 4th answers 429, another customer goes ahead', async () => {
    const [a, b] = replicas as [INestApplication, INestApplication];
    // Replica A takes all 3 slots of customer acme by hand, as 3 exports in progress would.
    const locks = a.get(LockService);
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await locks.acquire('export:acme', { limit: 3 }));

    const refused = await request(b.getHttpServer()).get('/invoices/export/acme');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ type: 'urn:latch:problem:limit-reached', status: 429 });
    await request(b.getHttpServer())
      .get('/invoices/export/globex')
      .expect(200, { result: 'exported globex (token 1)' });

    await held[0]!.release();
    await request(b.getHttpServer())
      .get('/invoices/export/acme')
      .expect(200, { result: 'exported acme (token 4)' });
    await Promise.all(held.slice(1).map((lock) => lock.release()));
  });

  test('the hourly report fired on both replicas runs once', async () => {
    const jobs = replicas.map((app) => app.get(ReportJob));
    await Promise.all(jobs.map((job) => job.build()));
    expect(jobs[0]!.runs + jobs[1]!.runs).toBe(1);
    // lockAtLeastMs keeps it held: a replica firing a little late skips too.
    await Promise.all(jobs.map((job) => job.build()));
    expect(jobs[0]!.runs + jobs[1]!.runs).toBe(1);
  });
});
