import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { metrics, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterEach, expect, test } from 'vitest';
import { nightlyReport, tracedLocks } from '../examples/telemetry.js';
import { LockClient, LockConfigError, type LockStore, LockStoreError, memoryStore } from '../src/index.js';
import { CollectingReader, telemetryHarness, until } from './helpers/telemetry-harness.js';
import { describeTelemetryScenarios } from './helpers/telemetry-scenarios.js';

let shared = memoryStore();
afterEach(() => {
  shared = memoryStore();
});

describeTelemetryScenarios(
  'memory',
  () => shared,
  () => `telemetry/${randomUUID()}`,
);

test('a tryAcquire that finds the lock held is recorded as busy, an aborted wait as cancelled', async () => {
  const otel = telemetryHarness();
  const store = memoryStore();
  const holder = new LockClient({ store });
  const client = new LockClient({ store, pollMs: 20, telemetry: otel.telemetry });
  const lock = await holder.acquire('k');
  expect(await client.tryAcquire('k')).toBeNull();
  const abort = new AbortController();
  const waiting = client.acquire('k', { signal: abort.signal });
  abort.abort(new Error('shutting down'));
  await expect(waiting).rejects.toThrow('shutting down');

  expect(otel.spans('latch.acquire').map((span) => span.attributes['latch.acquire.outcome'])).toEqual([
    'busy',
    'cancelled',
  ]);
  expect(await otel.sum('latch.lock.acquisitions', { 'latch.acquire.outcome': 'busy' })).toBe(1);
  expect(await otel.sum('latch.lock.acquisitions', { 'latch.acquire.outcome': 'cancelled' })).toBe(1);
  await lock.release();
});

test('a store that fails is recorded as a store error on the span, the metrics and the store requests', async () => {
  const otel = telemetryHarness();
  const store = memoryStore();
  const failing = {
    ...store,
    kind: store.kind,
    maxRecordBytes: store.maxRecordBytes,
    checkKey: (key: string) => store.checkKey(key),
    recordBytes: (record: Parameters<typeof store.recordBytes>[0]) => store.recordBytes(record),
    read: async () => {
      throw new LockStoreError('store down', { retryable: false, reason: 'unavailable' });
    },
    write: async () => {
      throw new LockStoreError('store down', { retryable: false, reason: 'unavailable' });
    },
    claim: undefined,
  };
  const client = new LockClient({ store: failing, telemetry: otel.telemetry, retry: { attempts: 1 } });
  await expect(client.acquire('k', { waitMs: 0 })).rejects.toBeInstanceOf(LockStoreError);

  const [span] = otel.spans('latch.acquire');
  expect(span?.attributes).toMatchObject({
    'latch.acquire.outcome': 'store_error',
    'error.type': 'LOCK_STORE',
  });
  expect(span?.status).toMatchObject({ code: 2, message: 'store down' });
  expect(await otel.sum('latch.lock.acquisitions', { 'latch.acquire.outcome': 'store_error' })).toBe(1);
  expect(await otel.sum('latch.store.requests', { 'latch.store.outcome': 'error' })).toBeGreaterThan(0);
});

test('keyLabel: a function labels spans and metrics, false leaves the key out', async () => {
  const labelled = telemetryHarness();
  const client = new LockClient({
    store: memoryStore(),
    telemetry: { ...labelled.telemetry, keyLabel: (key) => key.split(':')[0]! },
  });
  await (await client.acquire('invoice:1234')).release();
  expect(labelled.spans('latch.acquire')[0]?.attributes['latch.lock.key']).toBe('invoice');
  expect(await labelled.sum('latch.lock.acquisitions', { 'latch.lock.key': 'invoice' })).toBe(1);

  const unlabelled = telemetryHarness();
  const quiet = new LockClient({
    store: memoryStore(),
    telemetry: { ...unlabelled.telemetry, keyLabel: false },
  });
  await (await quiet.acquire('user:alice@example.com')).release();
  for (const span of [...unlabelled.spans('latch.acquire'), ...unlabelled.spans('latch.hold')]) {
    expect(span.attributes).not.toHaveProperty('latch.lock.key');
  }
});

test('a semaphore records its limit on the spans', async () => {
  const otel = telemetryHarness();
  const client = new LockClient({ store: memoryStore(), telemetry: otel.telemetry });
  await (await client.acquire('pool', { limit: 3 })).release();
  await (await client.acquire('single')).release();
  expect(otel.spans('latch.acquire').map((span) => span.attributes['latch.lock.limit'])).toEqual([
    3,
    undefined,
  ]);
});

test('the instruments have the documented kinds and units', async () => {
  const otel = telemetryHarness();
  const client = new LockClient({
    store: memoryStore(),
    leaseMs: 3000,
    heartbeatMs: 20,
    telemetry: otel.telemetry,
  });
  await (await client.acquire('k')).release();
  const expected = {
    'latch.lock.wait.duration': ['HISTOGRAM', 's'],
    'latch.lock.hold.duration': ['HISTOGRAM', 's'],
    'latch.lock.acquisitions': ['COUNTER', '{acquisition}'],
    'latch.lock.held': ['UP_DOWN_COUNTER', '{lock}'],
    'latch.store.requests': ['COUNTER', '{request}'],
  };
  for (const [name, [type, unit]] of Object.entries(expected)) {
    expect(await otel.descriptor(name), name).toMatchObject({ type, unit });
  }
});

test('telemetry options and span attributes are checked before any request', () => {
  const store = memoryStore();
  expect(() => new LockClient({ store, telemetry: { keyLable: () => 'x' } as never })).toThrow(
    /unknown option keyLable; did you mean keyLabel\?/,
  );
  expect(() => new LockClient({ store, telemetry: true as never })).toThrow(LockConfigError);
  expect(() => new LockClient({ store, telemetry: { keyLabel: 'x' as never } })).toThrow(
    /keyLabel must be a function/,
  );
  expect(() => new LockClient({ store, telemetry: { meterProvider: {} as never } })).toThrow(/getMeter/);
  const client = new LockClient({ store });
  expect(() => client.checkAcquireOptions({ attributes: { route: {} as never } })).toThrow(
    /attributes.route must be a string, a finite number or a boolean/,
  );
  expect(() => client.checkAcquireOptions({ attributes: new Map() as never })).toThrow(/plain object/);
  expect(() => client.checkAcquireOptions({ attribute: {} } as never)).toThrow(
    /unknown option attribute; did you mean attributes\?/,
  );
  expect(() =>
    client.checkAcquireOptions({ attributes: { 'http.route': '/x', retries: 2, cron: true } }),
  ).not.toThrow();
});

test('without providers, spans and metrics go to the global ones; telemetry: false records nothing', async () => {
  const otel = telemetryHarness();
  trace.setGlobalTracerProvider(otel.telemetry.tracerProvider as never);
  metrics.setGlobalMeterProvider(otel.telemetry.meterProvider as never);
  try {
    await (await new LockClient({ store: memoryStore(), telemetry: false }).acquire('off')).release();
    await (await new LockClient({ store: memoryStore() }).acquire('on')).release();
  } finally {
    trace.disable();
    metrics.disable();
  }
  expect(otel.spans('latch.acquire').map((span) => span.attributes['latch.lock.key'])).toEqual(['on']);
  expect(await otel.sum('latch.lock.acquisitions')).toBe(1);
});

test('a tracer, meter or key label that throws never changes what the lock does', async () => {
  const boom = () => {
    throw new Error('exporter down');
  };
  const throwingInstrument = { add: boom, record: boom };
  const broken = [
    { tracerProvider: { getTracer: boom } },
    { meterProvider: { getMeter: boom } },
    { tracerProvider: { getTracer: () => ({ startSpan: boom }) } },
    {
      meterProvider: {
        getMeter: () => ({
          createHistogram: () => throwingInstrument,
          createCounter: () => throwingInstrument,
          createUpDownCounter: () => throwingInstrument,
        }),
      },
    },
    { ...telemetryHarness().telemetry, keyLabel: boom },
  ];
  for (const telemetry of broken) {
    const store = memoryStore();
    const client = new LockClient({ store, leaseMs: 3000, heartbeatMs: 20, telemetry });
    const lock = await client.acquire('k');
    expect(await client.tryAcquire('k')).toBeNull();
    await expect(client.acquire('k', { waitMs: 0 })).rejects.toThrow(/Timed out/);
    await lock.release();
    expect(lock.isHeld).toBe(false);
    expect((await client.inspect('k')).state).toBe('free');
  }
});

test('the README example: spans per acquisition, metrics by key label', async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const example = readFileSync(new URL('../examples/telemetry.ts', import.meta.url), 'utf8').trim();
  expect(readme).toContain(example);

  const spans = new InMemorySpanExporter();
  const reader = new CollectingReader();
  const locks = tracedLocks(spans, reader);
  expect(await nightlyReport(locks, 'acme')).toBe(1);
  expect(await nightlyReport(locks, 'globex')).toBe(1);
  const attempts = spans.getFinishedSpans().filter((span) => span.name === 'latch.acquire');
  expect(attempts.map((span) => [span.attributes['latch.lock.key'], span.attributes.tenant])).toEqual([
    ['reports', 'acme'],
    ['reports', 'globex'],
  ]);
  const { resourceMetrics } = await reader.collect();
  const acquisitions = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((metric) => metric.descriptor.name === 'latch.lock.acquisitions');
  // One series for both tenants: the label, not the key, and no span attributes.
  expect(acquisitions?.dataPoints.map((point) => [point.attributes, point.value])).toEqual([
    [{ 'latch.store.kind': 'memory', 'latch.lock.key': 'reports', 'latch.acquire.outcome': 'acquired' }, 2],
  ]);
  await locks.close();
});

test('a lease that runs out while the store fails is recorded lost as expired', async () => {
  const otel = telemetryHarness();
  const store = memoryStore();
  let failing = false;
  const flaky = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || !['read', 'write', 'delete', 'claim'].includes(String(property))) {
        return value;
      }
      return (...args: unknown[]) => {
        if (failing) throw new LockStoreError('store down', { retryable: true, reason: 'unavailable' });
        return value.apply(target, args);
      };
    },
  });
  const client = new LockClient({ store: flaky, leaseMs: 1000, heartbeatMs: 50, telemetry: otel.telemetry });
  const lock = await client.acquire('k');
  failing = true;
  await until(() => !lock.isHeld);

  expect(otel.spans('latch.hold')[0]?.attributes['latch.lost.reason']).toBe('expired');
  expect(await otel.sum('latch.lock.lost', { 'latch.lost.reason': 'expired' })).toBe(1);
  expect(await otel.sum('latch.store.requests', { 'latch.store.outcome': 'error' })).toBeGreaterThan(0);
  failing = false;
  await client.close();
});

test('a local hand-off records one hold per holder, each linked to its own attempt', async () => {
  const otel = telemetryHarness();
  const client = new LockClient({ store: memoryStore(), pollMs: 20, telemetry: otel.telemetry });
  const first = await client.acquire('k');
  const second = client.acquire('k');
  await until(() => otel.spans('latch.acquire').length === 1);
  await first.release();
  await (await second).release();

  const attempts = otel.spans('latch.acquire');
  const holds = otel.spans('latch.hold');
  expect(holds).toHaveLength(2);
  expect(holds.map((hold) => hold.links[0]?.context.spanId)).toEqual(
    attempts.map((attempt) => attempt.spanContext().spanId),
  );
  expect(holds.map((hold) => hold.attributes['latch.lock.fencing_token'])).toEqual(
    attempts.map((attempt) => attempt.attributes['latch.lock.fencing_token']),
  );
  expect(await otel.sum('latch.lock.hold.duration', { 'latch.hold.outcome': 'released' })).toBe(2);
  expect(await otel.sum('latch.lock.held')).toBe(0);
});

test("a store class with private fields works through the telemetry's store wrapper", async () => {
  class PrivateStore implements LockStore {
    readonly #inner = memoryStore();
    readonly kind = 'private';
    readonly maxRecordBytes = this.#inner.maxRecordBytes;
    checkKey(key: string): void {
      this.#inner.checkKey(key);
    }
    read(key: string) {
      return this.#inner.read(key);
    }
    write(...args: Parameters<LockStore['write']>) {
      return this.#inner.write(...args);
    }
    delete(key: string, version: string) {
      return this.#inner.delete(key, version);
    }
    recordBytes(record: Parameters<LockStore['recordBytes']>[0]): number {
      return this.#inner.recordBytes(record);
    }
  }
  const otel = telemetryHarness();
  const client = new LockClient({ store: new PrivateStore(), telemetry: otel.telemetry });
  const lock = await client.acquire('k');
  await lock.release();
  expect(
    await otel.sum('latch.store.requests', { 'latch.store.kind': 'private', 'latch.store.outcome': 'ok' }),
  ).toBeGreaterThan(0);
});

test('a meter that throws leaves the spans whole', async () => {
  const otel = telemetryHarness();
  const boom = () => {
    throw new Error('metrics backend down');
  };
  const instrument = { add: boom, record: boom };
  const meterProvider = {
    getMeter: () => ({
      createHistogram: () => instrument,
      createCounter: () => instrument,
      createUpDownCounter: () => instrument,
    }),
  };
  let renewed = 0;
  const client = new LockClient({
    store: memoryStore(),
    leaseMs: 3000,
    heartbeatMs: 20,
    telemetry: { tracerProvider: otel.telemetry.tracerProvider, meterProvider },
    onEvent: (event) => {
      if (event.type === 'renewed') renewed++;
    },
  });
  const lock = await client.acquire('k');
  await until(() => renewed >= 2); // renewals, each one's metric throwing
  await lock.release();
  expect(otel.spans('latch.acquire')[0]?.attributes['latch.acquire.outcome']).toBe('acquired');
  const [hold] = otel.spans('latch.hold');
  expect(hold?.attributes['latch.hold.outcome']).toBe('released');
  expect(hold?.events).toHaveLength(renewed);
});
