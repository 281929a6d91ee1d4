import { LockClient, memoryStore } from '@latch/core';
import express from 'express';
import { expect, test } from 'vitest';
import { lock } from '../src/index.js';
import { serve } from './helpers/serve.js';

/** A tracer provider that keeps each span's name and attributes: all this test needs of OpenTelemetry. */
function recordingTracer() {
  const spans: { name: string; attributes: Record<string, unknown> }[] = [];
  const startSpan = (name: string, options?: { attributes?: Record<string, unknown> }) => {
    const span = { name, attributes: { ...options?.attributes } };
    spans.push(span);
    return {
      setAttributes: (more: Record<string, unknown>) => Object.assign(span.attributes, more),
      setAttribute: (key: string, value: unknown) => Object.assign(span.attributes, { [key]: value }),
      setStatus: () => undefined,
      addEvent: () => undefined,
      end: () => undefined,
      spanContext: () => ({ traceId: `${'0'.repeat(31)}1`, spanId: `${'0'.repeat(15)}1`, traceFlags: 1 }),
    };
  };
  return { spans, tracerProvider: { getTracer: () => ({ startSpan }) } };
}

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
