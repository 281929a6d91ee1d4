import { LockClient, memoryStore } from '@latch/core';
import express from 'express';
import { expect, test } from 'vitest';
import { recordingTracer } from '../../../test-support/recording-tracer.js';
import { lock } from '../src/index.js';
import { serve } from './helpers/serve.js';

test("the lock's spans carry the route template, the method and the lock's name", async () => {
  const otel = recordingTracer();
  const client = new LockClient({ store: memoryStore(), telemetry: { tracerProvider: otel.tracerProvider } });
  const app = express();
  app.post(
    '/invoices/:id/pay',
    lock({ client, name: 'invoice', key: (req) => req.params.id }),
    (_req, res) => {
      res.send('paid');
    },
  );
  const served = await serve(app);
  try {
    const response = await fetch(`${served.url}/invoices/42/pay`, { method: 'POST' });
    expect(await response.text()).toBe('paid');
  } finally {
    await served.close();
    await client.close();
  }
  const attempt = otel.spans.find((span) => span.name === 'latch.acquire');
  expect(attempt?.attributes).toMatchObject({
    'http.route': '/invoices/:id/pay',
    'http.request.method': 'POST',
    'latch.lock.name': 'invoice',
    'latch.acquire.outcome': 'acquired',
  });
  expect(otel.spans.find((span) => span.name === 'latch.hold')?.attributes['http.route']).toBe(
    '/invoices/:id/pay',
  );
});
