import { readFileSync } from 'node:fs';
import { S3Client } from '@aws-sdk/client-s3';
import { type RedisServer, type S3Server, startRedis, startS3Server } from '@latch/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ExportJob, startExportWorker } from '../examples/export-worker.js';
import { type InvoiceJob, startInvoiceWorker } from '../examples/invoice-worker.js';
import { until } from './helpers/until.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = (name: string) =>
  readFileSync(new URL(`../examples/${name}`, import.meta.url), 'utf8').trim();

let redis: RedisServer;
let s3: S3Server;

beforeAll(async () => {
  [redis, s3] = await Promise.all([startRedis(), startS3Server({ bucket: 'locks' })]);
});

afterAll(async () => {
  await Promise.all([redis?.stop(), s3?.stop()]);
});

describe('README example', () => {
  test('README shows invoice-worker.ts exactly as tested', () => {
    expect(readme).toContain(example('invoice-worker.ts'));
  });

  test('invoices of one customer are charged one at a time, others side by side', async () => {
    const s3Client = new S3Client(s3.clientConfig());
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const charging = new Map<string, number>();
    const overlaps: string[] = [];
    let atOnce = 0;
    let sideBySide = false;
    const worker = startInvoiceWorker(connection, s3Client, 'locks', async (invoiceId, _token, signal) => {
      const customer = invoiceId.split('-')[0]!;
      if (charging.get(customer)) overlaps.push(invoiceId);
      charging.set(customer, (charging.get(customer) ?? 0) + 1);
      atOnce++;
      if (atOnce >= 2) sideBySide = true;
      // The first invoices wait until two customers are being charged at the same time.
      await until('two customers charged side by side', () => sideBySide, 20_000);
      signal.throwIfAborted();
      atOnce--;
      charging.set(customer, charging.get(customer)! - 1);
    });
    const queue = new Queue<InvoiceJob>('invoices', { connection: { url: redis.url } });
    try {
      const jobs = await queue.addBulk(
        ['acme', 'acme', 'acme', 'globex', 'globex', 'initech'].map((customerId, n) => ({
          name: 'charge',
          data: { customerId, invoiceId: `${customerId}-${n}` },
        })),
      );
      await until(
        'every invoice was charged',
        async () => {
          const [failed] = await queue.getFailed(0, 0);
          if (failed) throw new Error(`invoice job failed: ${failed.failedReason}`);
          return (await queue.getCompletedCount()) === jobs.length;
        },
        60_000,
      );
      // Each customer's invoices got that customer's fencing tokens 1, 2, 3, ... in turn.
      const tokens: Record<string, number[]> = {};
      for (const job of await queue.getCompleted()) {
        const [, invoice, token, key] = /^charged (\S+) as #(\d+) of (\S+)$/.exec(job.returnvalue)!;
        expect(key).toBe(`customer/${invoice!.split('-')[0]}`);
        tokens[key!] = [...(tokens[key!] ?? []), Number(token)];
      }
      for (const list of Object.values(tokens)) list.sort((x, y) => x - y);
      expect(tokens).toEqual({
        'customer/acme': [1, 2, 3],
        'customer/globex': [1, 2],
        'customer/initech': [1],
      });
      expect(overlaps).toEqual([]);
      expect(sideBySide).toBe(true);
    } finally {
      await worker.close();
      await queue.close();
      connection.disconnect();
      s3Client.destroy();
    }
  }, 90_000);
});

describe('README limit example', () => {
  test('README shows export-worker.ts exactly as tested', () => {
    expect(readme).toContain(example('export-worker.ts'));
  });

  test('exports of one tenant run two at a time, never three, each with its own fencing token', async () => {
    const s3Client = new S3Client(s3.clientConfig());
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const tenants = ['acme', 'acme', 'acme', 'acme', 'acme', 'globex', 'globex', 'initech'];
    const jobsOf = (tenant: string) => tenants.filter((name) => name === tenant).length;
    const inside = new Map<string, number>();
    const mostInside = new Map<string, number>();
    const turnedAway = new Set<string>();
    const worker = startExportWorker(connection, s3Client, 'locks', async (exportId, _token, signal) => {
      const tenant = exportId.split('-')[0]!;
      inside.set(tenant, (inside.get(tenant) ?? 0) + 1);
      mostInside.set(tenant, Math.max(mostInside.get(tenant) ?? 0, inside.get(tenant)!));
      // A tenant's first exports keep their slots until a second one runs beside them and, when
      // the tenant has more, another was turned away to the delayed set: one at a time never
      // gets there, and three at a time lets the third in instead of turning it away.
      await until(
        `two ${tenant} exports ran at once and another was delayed`,
        async () => {
          if (jobsOf(tenant) > 2 && (await queue.getDelayed()).some((job) => job.data.tenantId === tenant))
            turnedAway.add(tenant);
          return (
            (mostInside.get(tenant) ?? 0) >= Math.min(2, jobsOf(tenant)) &&
            (jobsOf(tenant) <= 2 || turnedAway.has(tenant))
          );
        },
        20_000,
      );
      signal.throwIfAborted();
      inside.set(tenant, inside.get(tenant)! - 1);
    });
    const queue = new Queue<ExportJob>('exports', { connection: { url: redis.url } });
    try {
      const jobs = await queue.addBulk(
        tenants.map((tenantId, n) => ({ name: 'export', data: { tenantId, exportId: `${tenantId}-${n}` } })),
      );
      await until(
        'every export was built',
        async () => {
          const [failed] = await queue.getFailed(0, 0);
          if (failed) throw new Error(`export job failed: ${failed.failedReason}`);
          return (await queue.getCompletedCount()) === jobs.length;
        },
        60_000,
      );
      expect(Object.fromEntries(mostInside)).toEqual({ acme: 2, globex: 2, initech: 1 });
      // Every export held a lock of its own: a tenant's tokens are all different.
      const tokens: Record<string, number[]> = {};
      for (const job of await queue.getCompleted()) {
        const [, exportId, token, key] = /^built (\S+) as #(\d+) of (\S+)$/.exec(job.returnvalue)!;
        expect(key).toBe(`tenant/${exportId!.split('-')[0]}`);
        tokens[key!] = [...(tokens[key!] ?? []), Number(token)];
      }
      for (const list of Object.values(tokens)) list.sort((x, y) => x - y);
      expect(tokens).toEqual({
        'tenant/acme': [1, 2, 3, 4, 5],
        'tenant/globex': [1, 2],
        'tenant/initech': [1],
      });
    } finally {
      await worker.close();
      await queue.close();
      connection.disconnect();
      s3Client.destroy();
    }
  }, 90_000);
});
