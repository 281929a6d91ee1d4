import { loadOtelApi, type OtelApi } from './otel-api.js';
import { readOtelGlobals } from './otel-globals.js';
import type { TelemetryOptions } from './telemetry-options.js';

/** What a LockClient's telemetry records to. */
export interface OtelBinding {
  readonly tracerProvider: OtelApi.TracerProvider;
  readonly meterProvider: OtelApi.MeterProvider;
  /** The context to parent spans on; undefined leaves it to the tracer (its own API's active one). */
  activeContext(): OtelApi.Context | undefined;
}

/**
 * Where telemetry goes, or undefined when it has nowhere to go. Providers given in the options
 * win; the rest comes from @opentelemetry/api when core can load it, else from the globals an
 * application registered through a copy of the API core cannot load (one bundled with it),
 * else from nothing: a tracer provider passed in then works alone (spans take their parent
 * from the tracer's own API), with metrics off unless a meter provider is passed too.
 */
export function bindOtel(options: TelemetryOptions): OtelBinding | undefined {
  const tracerProvider = options.tracerProvider as OtelApi.TracerProvider | undefined;
  const meterProvider = options.meterProvider as OtelApi.MeterProvider | undefined;
  const api = loadOtelApi();
  if (api) {
    return {
      tracerProvider: tracerProvider ?? api.trace,
      meterProvider: meterProvider ?? api.metrics,
      activeContext: () => api.context.active(),
    };
  }
  const globals = readOtelGlobals();
  const tracers = tracerProvider ?? globals?.trace;
  const meters = meterProvider ?? globals?.metrics;
  if (!tracers && !meters) return undefined;
  return {
    tracerProvider: tracers ?? NO_TRACER_PROVIDER,
    meterProvider: meters ?? NO_METER_PROVIDER,
    activeContext: () => globals?.context?.active(),
  };
}

/** Instruments that record nothing, for metrics with no meter provider anywhere. */
const noInstrument = { add() {}, record() {} };
const NO_METER_PROVIDER = {
  getMeter: () => ({
    createHistogram: () => noInstrument,
    createCounter: () => noInstrument,
    createUpDownCounter: () => noInstrument,
  }),
} as unknown as OtelApi.MeterProvider;

/** A tracer whose spans record nothing, for spans with no tracer provider anywhere. */
const noSpan = {
  setAttributes() {
    return noSpan;
  },
  setAttribute() {
    return noSpan;
  },
  setStatus() {
    return noSpan;
  },
  addEvent() {
    return noSpan;
  },
  end() {},
  spanContext: () => ({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }),
};
const NO_TRACER_PROVIDER = {
  getTracer: () => ({ startSpan: () => noSpan }),
} as unknown as OtelApi.TracerProvider;
