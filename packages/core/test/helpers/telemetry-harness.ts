import type { Attributes } from '@opentelemetry/api';
import { type DataPoint, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { expect } from 'vitest';
import type { TelemetryOptions } from '../../src/index.js';

/** A metric reader the test collects on demand. */
export class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** Point values of a counter or up-down counter, or histogram summaries. */
type Value = number | { count: number; sum?: number };

/**
 * SDK providers whose spans and metrics land in memory, to pass as a LockClient's `telemetry`
 * option; `spans` and `points` read what was recorded so far.
 */
export function telemetryHarness() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const telemetry: TelemetryOptions = { tracerProvider, meterProvider };
  return {
    telemetry,
    spans(name: string): ReadableSpan[] {
      return exporter.getFinishedSpans().filter((span) => span.name === name);
    },
    /** The data points of instrument `name`, each with its attributes and value. */
    async points(name: string): Promise<{ attributes: Attributes; value: Value }[]> {
      const { resourceMetrics, errors } = await reader.collect();
      expect(errors).toEqual([]);
      const metric = resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((m) => m.descriptor.name === name);
      return ((metric?.dataPoints ?? []) as DataPoint<Value>[]).map((point) => ({
        attributes: point.attributes,
        value: point.value,
      }));
    },
    /** The summed value of counter `name` over points whose attributes include `where`. */
    async sum(name: string, where: Attributes = {}): Promise<number> {
      const matching = (await this.points(name)).filter((point) =>
        Object.entries(where).every(([k, v]) => point.attributes[k] === v),
      );
      return matching.reduce((total, point) => total + countOf(point.value), 0);
    },
    async descriptor(name: string) {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name)
        ?.descriptor;
    },
  };
}

/** A counter's value, or a histogram's count. */
function countOf(value: Value): number {
  return typeof value === 'number' ? value : value.count;
}

export async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}
