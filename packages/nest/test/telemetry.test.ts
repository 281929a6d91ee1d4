import { memoryStore } from '@latch/core';
import { Injectable } from '@nestjs/common';
import { expect, test } from 'vitest';
import { Locked, LockModule } from '../src/index.js';
import { startApp } from './helpers/nest.js';

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

@Injectable()
class PayoutService {
  @Locked('payout:{0}')
  async run(day: string): Promise<string> {
    return `paid ${day}`;
  }
}

test("a @Locked() method's lock spans name the class and method", async () => {
  const otel = recordingTracer();
  const app = await startApp({
    imports: [
      LockModule.forRoot({ store: memoryStore(), telemetry: { tracerProvider: otel.tracerProvider } }),
    ],
    providers: [PayoutService],
  });
  try {
    expect(await app.get(PayoutService).run('2026-11-24')).toBe('paid 2026-11-24');
  } finally {
    await app.close();
  }
  for (const name of ['latch.acquire', 'latch.hold']) {
    expect(otel.spans.find((span) => span.name === name)?.attributes).toMatchObject({
      'code.function.name': 'PayoutService.run',
      'latch.lock.key': 'payout:2026-11-24',
    });
  }
});
