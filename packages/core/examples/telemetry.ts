import { LockClient, memoryStore } from '@latch/core';
import { MeterProvider, type MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';

// An application usually starts the OpenTelemetry SDK once (e.g. NodeSDK), which registers
// global providers: LockClient then needs no option at all. Here the providers are passed in,
// and keyLabel keeps one metric series per kind of key instead of one per tenant.
export function tracedLocks(spanExporter: SpanExporter, metricReader: MetricReader): LockClient {
  return new LockClient({
    store: memoryStore(),
    telemetry: {
      tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] }),
      meterProvider: new MeterProvider({ readers: [metricReader] }),
      keyLabel: (key) => key.split('/')[0] ?? key, // 'reports/acme' → 'reports'
    },
  });
}

export async function nightlyReport(locks: LockClient, tenant: string): Promise<number> {
  // `attributes` go on this acquisition's spans only, never on metrics.
  return locks.withLock(`reports/${tenant}`, (lock) => lock.fencingToken, {
    attributes: { 'job.name': 'nightly-report', tenant },
  });
}
