import type { FaultProxy, S3FaultHandle, S3Server } from '@latch/testing';
import type { DynamoDBThrottler } from './dynamodb-throttler.js';
import type { FaultInjector } from './run-scenario.js';

// Faults come one at a time, a few per second: dense enough that most acquisitions, renewals
// and releases meet one, sparse enough that the SDK's own backoff does not stall the run.
const NETWORK_FAULT_EVERY_MS = 400;
// Throttling comes in windows: everything is refused for a while, then served again.
const THROTTLE_EVERY_MS = 1000;
const THROTTLE_FOR_MS = 250;

/** Runs `step` every `everyMs` between start() and stop(); stop() heals and returns the count of faults fired. */
function periodic(everyMs: number, step: (round: number) => void, heal: () => number): FaultInjector {
  let timer: NodeJS.Timeout | undefined;
  let round = 0;
  return {
    start() {
      timer = setInterval(() => step(round++), everyMs);
    },
    async stop() {
      clearInterval(timer);
      return heal();
    },
  };
}

/** Network faults come in kinds; a scenario checks that every kind really fired, not just some. */
export type NetworkFaultKind = 'latency' | 'reset' | 'lost response';
export interface NetworkFaultInjector extends FaultInjector {
  /** After stop(): how many faults of each kind fired. */
  readonly firedByKind: Record<NetworkFaultKind, number>;
}

/**
 * S3 network trouble in rotation: latency spikes (before and after the write is applied),
 * connections reset before the write, and writes applied whose response is lost. One fault is
 * armed at a time, and it stays armed until it meets a request, so they never pile up.
 */
export function s3NetworkFaults(server: S3Server, keys: RegExp): NetworkFaultInjector {
  const armed: Array<{ kind: NetworkFaultKind; handle: S3FaultHandle }> = [];
  const rotation: Array<[NetworkFaultKind, () => S3FaultHandle]> = [
    ['latency', () => server.faults.latency({ key: keys, times: 2 }, 400)],
    ['reset', () => server.faults.resetBeforeApply({ op: 'PutObject', key: keys, times: 1 })],
    ['lost response', () => server.faults.dropResponseAfterApply({ op: 'PutObject', key: keys, times: 1 })],
    [
      'latency',
      () => server.faults.latency({ op: 'PutObject', key: keys, times: 1 }, 300, { afterApply: true }),
    ],
    ['reset', () => server.faults.resetBeforeApply({ op: 'GetObject', key: keys, times: 1 })],
  ];
  const firedByKind: Record<NetworkFaultKind, number> = { latency: 0, reset: 0, 'lost response': 0 };
  let next = 0;
  const injector = periodic(
    NETWORK_FAULT_EVERY_MS,
    () => {
      const last = armed.at(-1);
      // A fault that met no request yet stays armed, so every kind in the rotation gets its turn.
      if (last && last.handle.hits === 0) return;
      last?.handle.remove();
      const [kind, arm] = rotation[next++ % rotation.length]!;
      armed.push({ kind, handle: arm() });
    },
    () => {
      server.faults.clear();
      for (const { kind, handle } of armed) firedByKind[kind] += handle.hits;
      return armed.reduce((sum, { handle }) => sum + handle.hits, 0);
    },
  );
  return { ...injector, firedByKind };
}

/** S3 throttling: every request on the scenario's keys answered 503 SlowDown for a window, once a second. */
export function s3Throttling(server: S3Server, keys: RegExp): FaultInjector {
  const handles: S3FaultHandle[] = [];
  return periodic(
    THROTTLE_EVERY_MS,
    () => {
      const handle = server.faults.slowDown({ key: keys });
      handles.push(handle);
      setTimeout(() => handle.remove(), THROTTLE_FOR_MS).unref();
    },
    () => {
      server.faults.clear();
      return handles.reduce((sum, h) => sum + h.hits, 0);
    },
  );
}

/**
 * Network trouble between the workers and DynamoDB Local, on the TCP proxy in front of it:
 * latency spikes, every open connection reset, new connections reset, and responses dropped
 * after DynamoDB applied the request.
 */
export function dynamoNetworkFaults(proxy: FaultProxy): NetworkFaultInjector {
  let fired = 0;
  // A TCP proxy cannot tell which request a fault met; it counts the faults switched on, and a
  // reset of open connections only when there were connections to reset.
  const firedByKind: Record<NetworkFaultKind, number> = { latency: 0, reset: 0, 'lost response': 0 };
  const later = (ms: number, heal: () => void) => setTimeout(heal, ms).unref();
  const rotation: Array<[NetworkFaultKind, () => boolean]> = [
    [
      'latency',
      () => {
        proxy.latency(200);
        later(300, () => proxy.latency(0));
        return true;
      },
    ],
    [
      'reset',
      () => {
        const open = proxy.stats.active;
        proxy.reset();
        return open > 0;
      },
    ],
    [
      'lost response',
      () => {
        proxy.dropResponses(true);
        later(40, () => proxy.dropResponses(false));
        return true;
      },
    ],
    [
      'reset',
      () => {
        proxy.resetNext(1);
        return true;
      },
    ],
  ];
  let next = 0;
  const injector = periodic(
    NETWORK_FAULT_EVERY_MS,
    () => {
      const [kind, inject] = rotation[next % rotation.length]!;
      fired++;
      // A reset that found no open connection is tried again next round, not skipped.
      if (inject()) {
        firedByKind[kind]++;
        next++;
      }
    },
    () => {
      proxy.clear();
      return fired;
    },
  );
  return { ...injector, firedByKind };
}

/** DynamoDB throughput errors: every request refused for a window, once a second (see startDynamoDBThrottler). */
export function dynamoThrottling(throttler: DynamoDBThrottler): FaultInjector {
  return periodic(
    THROTTLE_EVERY_MS,
    () => throttler.throttleFor(THROTTLE_FOR_MS),
    () => {
      throttler.clear();
      return throttler.throttled;
    },
  );
}
