import type { FaultProxy, FaultProxyHits, S3FaultHandle, S3Server } from '@latch/testing';
import type { DynamoDBThrottler } from './dynamodb-throttler.js';
import type { FaultInjector } from './run-scenario.js';

// Faults come one at a time, a few per second: dense enough that most acquisitions, renewals
// and releases meet one, sparse enough that the SDK's own backoff does not stall the run.
const NETWORK_FAULT_EVERY_MS = 400;
// Throttling comes in windows: everything is refused for a while, then served again.
const THROTTLE_EVERY_MS = 1000;
const THROTTLE_FOR_MS = 250;
// How often an armed fault is looked at, to see whether it met a request yet.
const WATCH_EVERY_MS = 10;
// A fault that met nothing in this many rounds gives way to the next kind and gets its turn again
// on the next pass, so one kind waiting for traffic it may never see cannot starve the others.
const ROUNDS_BEFORE_GIVING_WAY = 5;
// A request applied late lands this long after its connection was cut: after the SDK's own
// retries gave up and the client re-read the record (a few hundred ms), well inside a 2 s lease.
const APPLY_LATE_MS = 1000;
// Late application stays armed this long after it first met a request, so every attempt the SDK
// makes of that request (and of any other sent meanwhile) is cut too and the client gives up.
const APPLY_LATE_WINDOW_MS = 500;

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

/** Network faults come in kinds; a scenario checks that every kind really met a request, not just some. */
export type NetworkFaultKind = 'latency' | 'reset' | 'lost response' | 'applied late';
export const NETWORK_FAULT_KINDS: readonly NetworkFaultKind[] = [
  'latency',
  'reset',
  'lost response',
  'applied late',
];
export interface NetworkFaultInjector extends FaultInjector {
  /** After stop(): how many requests (or connections) each kind of fault met. */
  readonly firedByKind: Record<NetworkFaultKind, number>;
}

/** One fault of a rotation, from being switched on until it is switched off again. */
interface ArmedFault {
  kind: NetworkFaultKind;
  /** Requests or connections it has met so far: read where the fault acts, not assumed. */
  hits(): number;
  /** Switches it off. */
  disarm(): void;
  /** Called at each round while it has met nothing yet (e.g. a reset that found no connection tries again). */
  retry?(): void;
  /** How long it stays on after it first met something (default: switched off at once). */
  windowMs?: number;
}

/**
 * Runs a rotation of faults one at a time: each stays armed until it has met a request (so every
 * kind gets its turn whatever the traffic), stays on for its window, is switched off, and the
 * next one is armed at the next round. What each met is counted where it acted.
 */
function rotation(arms: ReadonlyArray<() => ArmedFault>): NetworkFaultInjector {
  const firedByKind = Object.fromEntries(NETWORK_FAULT_KINDS.map((k) => [k, 0])) as Record<
    NetworkFaultKind,
    number
  >;
  const done: ArmedFault[] = [];
  let current: { fault: ArmedFault; hitAt?: number; idleRounds: number } | undefined;
  let next = 0;
  let watcher: NodeJS.Timeout | undefined;
  const finish = () => {
    if (!current) return;
    current.fault.disarm();
    done.push(current.fault);
    current = undefined;
  };
  const watch = () => {
    if (!current) return;
    const now = performance.now();
    if (current.hitAt === undefined && current.fault.hits() > 0) current.hitAt = now;
    if (current.hitAt !== undefined && now - current.hitAt >= (current.fault.windowMs ?? 0)) finish();
  };
  const injector = periodic(
    NETWORK_FAULT_EVERY_MS,
    () => {
      watch();
      if (current && current.hitAt === undefined && ++current.idleRounds >= ROUNDS_BEFORE_GIVING_WAY)
        finish();
      if (current) {
        if (current.hitAt === undefined) current.fault.retry?.();
        return;
      }
      current = { fault: arms[next++ % arms.length]!(), idleRounds: 0 };
      watch();
    },
    () => {
      clearInterval(watcher);
      watch();
      if (current) {
        current.fault.disarm();
        done.push(current.fault);
        current = undefined;
      }
      for (const fault of done) firedByKind[fault.kind] += fault.hits();
      return done.reduce((sum, fault) => sum + fault.hits(), 0);
    },
  );
  return {
    start() {
      watcher = setInterval(watch, WATCH_EVERY_MS);
      injector.start();
    },
    stop: injector.stop,
    firedByKind,
  };
}

/** An S3 fault handle as one armed fault of a rotation. */
function s3Fault(kind: NetworkFaultKind, handle: S3FaultHandle, windowMs?: number): ArmedFault {
  return {
    kind,
    hits: () => handle.hits,
    disarm: () => handle.remove(),
    ...(windowMs !== undefined ? { windowMs } : {}),
  };
}

/**
 * S3 network trouble in rotation: latency spikes (before and after the write is applied),
 * connections reset before the write, writes applied whose response is lost, and writes applied
 * late, after the client gave up and re-read. One fault is armed at a time, and it stays armed
 * until it meets a request, so they never pile up and every kind fires.
 */
export function s3NetworkFaults(server: S3Server, keys: RegExp): NetworkFaultInjector {
  const f = server.faults;
  return rotation([
    () => s3Fault('latency', f.latency({ key: keys, times: 2 }, 400)),
    () => s3Fault('reset', f.resetBeforeApply({ op: 'PutObject', key: keys, times: 1 })),
    () => s3Fault('lost response', f.dropResponseAfterApply({ op: 'PutObject', key: keys, times: 1 })),
    () =>
      s3Fault(
        'applied late',
        f.applyLate({ op: 'PutObject', key: keys }, { delayMs: APPLY_LATE_MS }),
        APPLY_LATE_WINDOW_MS,
      ),
    () => s3Fault('latency', f.latency({ op: 'PutObject', key: keys, times: 1 }, 300, { afterApply: true })),
    () => s3Fault('reset', f.resetBeforeApply({ op: 'GetObject', key: keys, times: 1 })),
  ]);
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
 * latency spikes, every open connection reset, a new connection reset, responses dropped after
 * DynamoDB applied the request, and requests applied late, after the client gave up. The proxy
 * counts what each fault met (requests delayed, connections reset or cut, requests taken).
 */
export function dynamoNetworkFaults(proxy: FaultProxy): NetworkFaultInjector {
  /** A fault of the proxy, counted by its hit counter from the moment it is armed. */
  const proxyFault = (
    kind: NetworkFaultKind,
    counters: keyof FaultProxyHits | ReadonlyArray<keyof FaultProxyHits>,
    arm: () => void,
    disarm: () => void,
    extra: Pick<ArmedFault, 'retry' | 'windowMs'> = {},
  ): ArmedFault => {
    const read = () => {
      const hits = proxy.stats.hits;
      return (typeof counters === 'string' ? [counters] : counters).reduce((sum, c) => sum + hits[c], 0);
    };
    const before = read();
    arm();
    let after: number | undefined;
    const hits = () => (after ?? read()) - before;
    return {
      kind,
      hits,
      disarm: () => {
        disarm();
        after = read();
      },
      ...extra,
    };
  };
  return rotation([
    () =>
      proxyFault(
        'latency',
        'latency',
        () => proxy.latency(200),
        () => proxy.latency(0),
        { windowMs: 300 },
      ),
    // Every open connection, now; a round that found none tries again at the next.
    () =>
      proxyFault(
        'reset',
        'reset',
        () => proxy.reset(),
        () => {},
        { retry: () => proxy.reset() },
      ),
    () =>
      proxyFault(
        'lost response',
        'dropResponses',
        () => proxy.dropResponses(true),
        () => proxy.dropResponses(false),
      ),
    // The next new connection, reset on its first bytes. Kept-alive connections may never be
    // replaced on their own, so a round that met none resets the open ones (counted too) to make
    // the clients reconnect into it.
    () =>
      proxyFault(
        'reset',
        ['resetNext', 'reset'],
        () => proxy.resetNext(1),
        () => proxy.resetNext(0),
        { retry: () => proxy.reset() },
      ),
    () =>
      proxyFault(
        'applied late',
        'applyLate',
        () => proxy.applyLate({ delayMs: APPLY_LATE_MS }),
        () => proxy.applyLate(false),
        { windowMs: APPLY_LATE_WINDOW_MS },
      ),
  ]);
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
