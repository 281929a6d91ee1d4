import { expect, test } from 'vitest';
import { LockClient, type LockStore, LockTimeoutError } from '../../src/index.js';
import { telemetryHarness, until } from './telemetry-harness.js';

/**
 * Acquire, wait timeout, loss and renewal, read back through the SDK's in-memory exporters,
 * on the store `makeStore` gives (shared by every client of one test).
 */
export function describeTelemetryScenarios(kind: string, makeStore: () => LockStore, key: () => string) {
  test(`${kind}: an acquire records its attempt span, a linked hold span and the acquired metrics`, async () => {
    const otel = telemetryHarness();
    const client = new LockClient({ store: makeStore(), pollMs: 20, telemetry: otel.telemetry });
    const name = key();
    const lock = await client.acquire(name, { attributes: { 'http.route': '/orders/:id' } });
    expect(await otel.sum('latch.lock.held', { 'latch.store.kind': kind })).toBe(1);
    await lock.release();

    const [attempt] = otel.spans('latch.acquire');
    expect(attempt?.attributes).toMatchObject({
      'latch.lock.key': name,
      'latch.store.kind': kind,
      'latch.acquire.outcome': 'acquired',
      'latch.lock.fencing_token': lock.fencingToken,
      'http.route': '/orders/:id',
    });
    const [hold] = otel.spans('latch.hold');
    expect(hold?.attributes).toMatchObject({
      'latch.lock.key': name,
      'latch.hold.outcome': 'released',
      'latch.lock.fencing_token': lock.fencingToken,
      'http.route': '/orders/:id',
    });
    expect(hold?.links.map((link) => link.context.spanId)).toEqual([attempt?.spanContext().spanId]);

    const acquired = { 'latch.store.kind': kind, 'latch.acquire.outcome': 'acquired' };
    expect(await otel.sum('latch.lock.acquisitions', acquired)).toBe(1);
    expect(await otel.sum('latch.lock.wait.duration', acquired)).toBe(1);
    expect(await otel.sum('latch.lock.hold.duration', { 'latch.hold.outcome': 'released' })).toBe(1);
    expect(await otel.sum('latch.lock.held')).toBe(0);
    // Span attributes given per call stay off metrics: they could multiply the series.
    for (const point of await otel.points('latch.lock.acquisitions')) {
      expect(Object.keys(point.attributes).sort()).toEqual(['latch.acquire.outcome', 'latch.store.kind']);
    }
    await client.close();
  });

  test(`${kind}: a wait that times out is recorded as a timeout`, async () => {
    const otel = telemetryHarness();
    const store = makeStore();
    const holder = new LockClient({ store, pollMs: 20 });
    const waiter = new LockClient({ store, pollMs: 20, telemetry: otel.telemetry });
    const name = key();
    const lock = await holder.acquire(name);
    await expect(waiter.acquire(name, { waitMs: 60 })).rejects.toBeInstanceOf(LockTimeoutError);

    expect(otel.spans('latch.acquire')[0]?.attributes).toMatchObject({
      'latch.acquire.outcome': 'timeout',
      'error.type': 'LOCK_TIMEOUT',
    });
    expect(otel.spans('latch.hold')).toEqual([]);
    const timeout = { 'latch.store.kind': kind, 'latch.acquire.outcome': 'timeout' };
    expect(await otel.sum('latch.lock.acquisitions', timeout)).toBe(1);
    expect(await otel.sum('latch.lock.wait.duration', timeout)).toBe(1);
    expect(await otel.sum('latch.lock.acquisitions', { 'latch.acquire.outcome': 'acquired' })).toBe(0);
    await lock.release();
    await Promise.all([holder.close(), waiter.close()]);
  });

  test(`${kind}: a lock freed by another client is recorded lost when its renewal finds out`, async () => {
    const otel = telemetryHarness();
    const store = makeStore();
    const client = new LockClient({ store, leaseMs: 3000, heartbeatMs: 30, telemetry: otel.telemetry });
    const name = key();
    const lock = await client.acquire(name);
    await new LockClient({ store }).forceRelease(name);
    await until(() => !lock.isHeld);

    const [hold] = otel.spans('latch.hold');
    expect(hold?.attributes).toMatchObject({ 'latch.hold.outcome': 'lost', 'latch.lost.reason': 'taken' });
    expect(hold?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(
      await otel.sum('latch.lock.lost', { 'latch.store.kind': kind, 'latch.lost.reason': 'taken' }),
    ).toBe(1);
    expect(await otel.sum('latch.lock.hold.duration', { 'latch.hold.outcome': 'lost' })).toBe(1);
    expect(await otel.sum('latch.lock.held')).toBe(0);
    await client.close();
  });

  test(`${kind}: renewals are counted and marked on the hold span`, async () => {
    const otel = telemetryHarness();
    let renewed = 0;
    const client = new LockClient({
      store: makeStore(),
      leaseMs: 3000,
      heartbeatMs: 20,
      telemetry: otel.telemetry,
      onEvent: (event) => {
        if (event.type === 'renewed') renewed++;
      },
    });
    const lock = await client.acquire(key());
    await until(() => renewed >= 2);
    await lock.release();

    expect(await otel.sum('latch.lock.renewals', { 'latch.store.kind': kind })).toBe(renewed);
    const [hold] = otel.spans('latch.hold');
    expect(hold?.events.filter((event) => event.name === 'latch.lock.renewed')).toHaveLength(renewed);
    await client.close();
  });
}
