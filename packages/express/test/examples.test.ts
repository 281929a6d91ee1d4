import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { startS3Server } from '@latch/testing';
import { describe, expect, test, vi } from 'vitest';
import { type Payments, startInvoiceService } from '../examples/invoice-service.js';
import { type Reports, startReportService } from '../examples/tenant-reports.js';
import { deferred, sleep } from './helpers/wait.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = readFileSync(new URL('../examples/invoice-service.ts', import.meta.url), 'utf8').trim();
const limitExample = readFileSync(new URL('../examples/tenant-reports.ts', import.meta.url), 'utf8').trim();

/** A payment provider that rejects stale fencing tokens, and can hold a charge open. */
class FakePayments implements Payments {
  readonly charges: Array<{ invoiceId: string; fencingToken: number }> = [];
  readonly highestToken = new Map<string, number>();
  hold: Promise<void> | undefined;
  started = deferred();

  async charge(invoiceId: string, options: { fencingToken: number; signal: AbortSignal }): Promise<string> {
    this.started.resolve();
    await this.hold;
    options.signal.throwIfAborted();
    if (options.fencingToken <= (this.highestToken.get(invoiceId) ?? 0))
      throw new Error('stale fencing token');
    this.highestToken.set(invoiceId, options.fencingToken);
    this.charges.push({ invoiceId, fencingToken: options.fencingToken });
    return `receipt-${invoiceId}-${options.fencingToken}`;
  }
}

describe('README example', () => {
  test('README shows examples/invoice-service.ts exactly as tested', () => {
    expect(readme).toContain(example);
  });

  test('two replicas of the invoice service on one S3 bucket charge an invoice one request at a time', async () => {
    await using s3 = await startS3Server({ bucket: 'my-locks' });
    const sdk = new S3Client(s3.clientConfig());
    const payments = new FakePayments();
    const replicas = [0, 1].map(() => startInvoiceService(sdk, 'my-locks', payments, 0));
    try {
      const [a, b] = await Promise.all(replicas.map(urlOf));
      const release = deferred();
      payments.hold = release.promise;

      const first = fetch(`${a}/invoices/inv-7/pay`, { method: 'POST' });
      await payments.started.promise;
      const second = await fetch(`${b}/invoices/inv-7/pay`, { method: 'POST' });
      const otherInvoice = fetch(`${b}/invoices/inv-8/pay`, { method: 'POST' });
      release.resolve();

      expect(second.status).toBe(423);
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await first).status).toBe(201);
      expect(await (await otherInvoice).json()).toEqual({ receipt: 'receipt-inv-8-1', fencingToken: 1 });

      // Once the first charge's response is sent, the lock is free again for the next one.
      let again = await fetch(`${b}/invoices/inv-7/pay`, { method: 'POST' });
      while (again.status === 423) {
        await sleep(20);
        again = await fetch(`${b}/invoices/inv-7/pay`, { method: 'POST' });
      }
      expect(await again.json()).toEqual({ receipt: 'receipt-inv-7-2', fencingToken: 2 });
      expect(payments.charges).toEqual([
        { invoiceId: 'inv-7', fencingToken: 1 },
        { invoiceId: 'inv-8', fencingToken: 1 },
        { invoiceId: 'inv-7', fencingToken: 2 },
      ]);

      // With the lock store gone, requests fail fast with 503 instead of running unprotected.
      // The server logs why, one line per cause.
      await s3.stop();
      const errorLog = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      const down = await fetch(`${a}/invoices/inv-9/pay`, { method: 'POST' });
      const logged = errorLog.mock.calls.map((call) => String(call[0]));
      errorLog.mockRestore();
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ type: 'urn:latch:problem:lock-store-unavailable' });
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(
        /^\[latch\] POST \/invoices\/inv-9\/pay answered 503: lock store unavailable/,
      );
    } finally {
      await Promise.all(replicas.map(close));
      sdk.destroy();
    }
  });
});

/** A report builder that holds every report open until `finish()`, counting those in progress. */
class HeldReports implements Reports {
  running = 0;
  private readonly done = deferred();

  async build(tenantId: string, options: { signal: AbortSignal }): Promise<string> {
    this.running++;
    await this.done.promise;
    options.signal.throwIfAborted();
    this.running--;
    return `report of ${tenantId}`;
  }

  finish(): void {
    this.done.resolve();
  }
}

describe('README limit example', () => {
  test('README shows examples/tenant-reports.ts exactly as tested', () => {
    expect(readme).toContain(limitExample);
  });

  test('two replicas on one S3 bucket run at most 3 reports per tenant; the 4th gets 429, another tenant goes ahead', async () => {
    await using s3 = await startS3Server({ bucket: 'my-locks' });
    const sdk = new S3Client(s3.clientConfig());
    const reports = new HeldReports();
    const replicas = [0, 1].map(() => startReportService(sdk, 'my-locks', reports, 0));
    try {
      const [a, b] = await Promise.all(replicas.map(urlOf));
      const first = [a, b, a].map((url) => fetch(`${url}/tenants/acme/report`));
      while (reports.running < 3) await sleep(10);

      const fourth = await fetch(`${b}/tenants/acme/report`);
      expect(fourth.status).toBe(429);
      expect(fourth.headers.get('retry-after')).toBe('1');
      expect(fourth.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await fourth.json()).toMatchObject({ type: 'urn:latch:problem:limit-reached', status: 429 });

      const otherTenant = fetch(`${b}/tenants/globex/report`);
      while (reports.running < 4) await sleep(10);
      reports.finish();
      expect(await (await otherTenant).json()).toEqual({ report: 'report of globex' });
      for (const response of await Promise.all(first)) {
        expect(await response.json()).toEqual({ report: 'report of acme' });
      }
    } finally {
      await Promise.all(replicas.map(close));
      sdk.destroy();
    }
  });
});

async function urlOf(server: Server): Promise<string> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
