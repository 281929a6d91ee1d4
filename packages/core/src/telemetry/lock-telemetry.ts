import {
  LockError,
  type LockLossReason,
  LockLostError,
  LockStoreError,
  LockTimeoutError,
} from '../shared/errors.js';
import type { LockEvent } from '../shared/lock-events.js';
import { latchVersion, type OtelApi } from './otel-api.js';
import { bindOtel, type OtelBinding } from './otel-binding.js';
import type { SpanAttributes } from './span-attributes.js';
import type { TelemetryOptions } from './telemetry-options.js';

type Attributes = OtelApi.Attributes;

// The values of the API's SpanKind.INTERNAL and SpanStatusCode.ERROR (fixed by the OpenTelemetry
// specification): written here, since the API itself may be out of reach (otel-binding.ts).
const INTERNAL = 0 as OtelApi.SpanKind;
const ERROR = 2 as OtelApi.SpanStatusCode;

/** How an acquire(), tryAcquire() or withLock() call ended; `latch.acquire.outcome`. */
export type AcquireOutcome = 'acquired' | 'busy' | 'timeout' | 'cancelled' | 'store_error' | 'error';
/** How a store request ended; `latch.store.outcome`. */
export type StoreOutcome = 'ok' | 'conflict' | 'error';

/** What the telemetry needs to know of a lock an attempt won. */
export interface HeldLock {
  readonly key: string;
  readonly fencingToken: number;
  readonly signal: AbortSignal;
}

/** One acquisition attempt being recorded: ended once with the lock, or with why there is none. */
export interface AttemptRecorder {
  acquired(lock: HeldLock): void;
  busy(): void;
  failed(error: unknown, signal: AbortSignal | undefined): void;
}

/** A hold from its 'acquired' event to its 'released' or 'lost' one. */
interface Hold {
  startedAt: number;
  span?: OtelApi.Span;
}

/**
 * A LockClient's OpenTelemetry instruments and spans. Attempts are recorded around the client's
 * acquire calls; holds, renewals and losses come from the client's lock events; store requests
 * from the instrumented store. Every entry point swallows its own failures: a broken exporter
 * or meter must never change what a lock does.
 */
export class LockTelemetry {
  private readonly tracer: OtelApi.Tracer;
  private readonly waitDuration: OtelApi.Histogram;
  private readonly holdDuration: OtelApi.Histogram;
  private readonly acquisitions: OtelApi.Counter;
  private readonly lost: OtelApi.Counter;
  private readonly renewals: OtelApi.Counter;
  private readonly storeRequests: OtelApi.Counter;
  private readonly held: OtelApi.UpDownCounter;
  /** Holds by key and fencing token (unique per acquisition of a key). */
  private readonly holds = new Map<string, Hold>();

  constructor(
    private readonly otel: OtelBinding,
    private readonly options: TelemetryOptions,
    private readonly storeKind: string,
    /** The client's monotonic clock, in ms. */
    private readonly monotonic: () => number,
  ) {
    const version = latchVersion();
    this.tracer = otel.tracerProvider.getTracer('@latch/core', version);
    const meter = otel.meterProvider.getMeter('@latch/core', version);
    this.waitDuration = meter.createHistogram('latch.lock.wait.duration', {
      unit: 's',
      description: 'Time from an acquire call to its outcome (acquired, busy, timeout, cancelled, error).',
    });
    this.holdDuration = meter.createHistogram('latch.lock.hold.duration', {
      unit: 's',
      description: 'Time a lock was held, from acquired to released or lost.',
    });
    this.acquisitions = meter.createCounter('latch.lock.acquisitions', {
      unit: '{acquisition}',
      description: 'Acquire calls by outcome.',
    });
    this.lost = meter.createCounter('latch.lock.lost', {
      unit: '{lock}',
      description: 'Locks whose lease was lost while held, by reason.',
    });
    this.renewals = meter.createCounter('latch.lock.renewals', {
      unit: '{renewal}',
      description: 'Lease renewals that landed.',
    });
    this.storeRequests = meter.createCounter('latch.store.requests', {
      unit: '{request}',
      description: 'Requests to the lock store by operation and outcome.',
    });
    this.held = meter.createUpDownCounter('latch.lock.held', {
      unit: '{lock}',
      description: 'Locks this client holds now.',
    });
  }

  /** Starts recording an acquire call for `key`, from now. */
  attempt(key: string, attributes: SpanAttributes | undefined, limit: number): AttemptRecorder {
    const parent = this.guard(() => this.otel.activeContext());
    const startedAt = this.monotonic();
    const span = this.guard(() =>
      this.tracer.startSpan(
        'latch.acquire',
        { kind: INTERNAL, attributes: this.spanAttributes(key, attributes, limit) },
        parent,
      ),
    );
    // Metrics and span apart: a meter that throws must not leave the span open, nor the reverse.
    const end = (outcome: AcquireOutcome, extra: Attributes, error?: unknown) => {
      const waitedMs = this.monotonic() - startedAt;
      this.guard(() => {
        const metricAttributes = { ...this.metricAttributes(key), 'latch.acquire.outcome': outcome };
        this.waitDuration.record(waitedMs / 1000, metricAttributes);
        this.acquisitions.add(1, metricAttributes);
      });
      this.guard(() => {
        if (!span) return;
        span.setAttributes({ 'latch.acquire.outcome': outcome, ...extra });
        if (outcome === 'store_error' || outcome === 'error') {
          span.setStatus({ code: ERROR, message: errorMessage(error) });
        }
        span.end();
      });
    };
    return {
      acquired: (lock) => {
        end('acquired', { 'latch.lock.fencing_token': lock.fencingToken });
        this.guard(() => this.startHoldSpan(lock, span, attributes, limit, parent));
      },
      busy: () => end('busy', {}),
      failed: (error, signal) =>
        this.guard(() => end(acquireOutcome(error, signal), { 'error.type': errorType(error) }, error)),
    };
  }

  /** Counts one store request. */
  storeRequest(operation: string, key: string, outcome: StoreOutcome, error?: unknown): void {
    this.guard(() => {
      const attributes: Attributes = {
        ...this.metricAttributes(key),
        'latch.store.operation': operation,
        'latch.store.outcome': outcome,
      };
      if (error !== undefined) attributes['error.type'] = errorType(error);
      this.storeRequests.add(1, attributes);
    });
  }

  /** The client's second event listener, beside its `onEvent` option. */
  readonly onEvent = (event: LockEvent): void => {
    this.guard(() => {
      switch (event.type) {
        case 'acquired':
          this.holds.set(holdId(event.key, event.fencingToken), { startedAt: this.monotonic() });
          this.held.add(1, this.metricAttributes(event.key));
          return;
        case 'renewed':
          this.guard(() => this.renewals.add(1, this.metricAttributes(event.key)));
          this.holds.get(holdId(event.key, event.fencingToken))?.span?.addEvent('latch.lock.renewed');
          return;
        case 'released':
        case 'lost':
          this.endHold(event);
          return;
        default:
          return;
      }
    });
  };

  private endHold(event: Extract<LockEvent, { type: 'released' | 'lost' }>): void {
    const id = holdId(event.key, event.fencingToken);
    const hold = this.holds.get(id);
    if (!hold) return;
    this.holds.delete(id);
    const heldMs = this.monotonic() - hold.startedAt;
    this.guard(() => {
      const attributes = this.metricAttributes(event.key);
      this.held.add(-1, attributes);
      this.holdDuration.record(heldMs / 1000, { ...attributes, 'latch.hold.outcome': event.type });
      if (event.type === 'lost') {
        this.lost.add(1, { ...attributes, 'latch.lost.reason': lossReason(event.error) });
      }
    });
    const span = hold.span;
    if (span) this.guard(() => endHoldSpan(span, event.type === 'lost' ? event.error : undefined));
  }

  /**
   * The hold's span: a sibling of the attempt's (same parent), linked to it, since a hold
   * outlives the wait that won it. A hold that ended before its attempt returned is ended at once.
   */
  private startHoldSpan(
    lock: HeldLock,
    attempt: OtelApi.Span | undefined,
    attributes: SpanAttributes | undefined,
    limit: number,
    parent: OtelApi.Context | undefined,
  ): void {
    const span = this.tracer.startSpan(
      'latch.hold',
      {
        kind: INTERNAL,
        attributes: {
          ...this.spanAttributes(lock.key, attributes, limit),
          'latch.lock.fencing_token': lock.fencingToken,
        },
        links: attempt ? [{ context: attempt.spanContext() }] : [],
      },
      parent,
    );
    const hold = this.holds.get(holdId(lock.key, lock.fencingToken));
    if (hold) hold.span = span;
    else endHoldSpan(span, lock.signal.aborted ? lock.signal.reason : undefined);
  }

  private spanAttributes(key: string, extra: SpanAttributes | undefined, limit: number): Attributes {
    const attributes: Attributes = { ...extra, 'latch.store.kind': this.storeKind };
    const label = this.spanKey(key);
    if (label !== undefined) attributes['latch.lock.key'] = label;
    if (limit > 1) attributes['latch.lock.limit'] = limit;
    return attributes;
  }

  private spanKey(key: string): string | undefined {
    const { keyLabel } = this.options;
    if (keyLabel === false) return undefined;
    return keyLabel ? keyLabel(key) : key;
  }

  /** Low-cardinality attributes of every lock metric: the store kind, and the key's label only when one was configured. */
  private metricAttributes(key: string): Attributes {
    const attributes: Attributes = { 'latch.store.kind': this.storeKind };
    if (typeof this.options.keyLabel === 'function')
      attributes['latch.lock.key'] = this.options.keyLabel(key);
    return attributes;
  }

  private guard<R>(work: () => R): R | undefined {
    try {
      return work();
    } catch {
      return undefined; // telemetry that fails must not fail the lock
    }
  }
}

function endHoldSpan(span: OtelApi.Span, lostBy: unknown): void {
  span.setAttribute('latch.hold.outcome', lostBy === undefined ? 'released' : 'lost');
  if (lostBy !== undefined) {
    span.setAttribute('latch.lost.reason', lossReason(lostBy));
    span.setStatus({ code: ERROR, message: errorMessage(lostBy) });
  }
  span.end();
}

function holdId(key: string, fencingToken: number): string {
  return `${fencingToken}:${key}`;
}

function acquireOutcome(error: unknown, signal: AbortSignal | undefined): AcquireOutcome {
  if (error instanceof LockTimeoutError) return 'timeout';
  if (signal?.aborted && error === signal.reason) return 'cancelled';
  if (error instanceof LockStoreError) return 'store_error';
  return 'error';
}

/** `error.type`: a Latch error's code, or the error's class name. */
function errorType(error: unknown): string {
  if (error instanceof LockError) return error.code;
  if (error instanceof Error) return error.name;
  return 'unknown';
}

function errorMessage(error: unknown): string | undefined {
  return error instanceof Error ? error.message : undefined;
}

/**
 * A client's telemetry, or undefined when it is off: turned off by the caller, or there is
 * nothing to record to (no @opentelemetry/api, no globals registered through a bundled copy
 * of it, no provider passed in), or the providers fail while setting up.
 */
export function createLockTelemetry(
  options: TelemetryOptions | false,
  storeKind: string,
  monotonic: () => number,
): LockTelemetry | undefined {
  if (options === false) return undefined;
  try {
    const otel = bindOtel(options);
    if (!otel) return undefined;
    return new LockTelemetry(otel, options, storeKind, monotonic);
  } catch {
    return undefined;
  }
}

/** `latch.lost.reason`: the reason a LockLostError carries, and `failed` for anything else that ended a lease. */
function lossReason(error: unknown): LockLossReason {
  return error instanceof LockLostError ? error.reason : 'failed';
}
