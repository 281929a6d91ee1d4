import type { OtelApi } from './otel-api.js';

/**
 * What an application registered through its own copy of @opentelemetry/api, read without
 * loading the package. Every copy of the API (1.x) keeps the registered globals in one object
 * on `globalThis`, under `Symbol.for('opentelemetry.js.api.1')`, so that copies installed or
 * bundled apart share them: the API's README describes this ("a variable on the global object"),
 * and every 1.x copy must keep it for copies of other 1.x versions to interoperate. This is how
 * @latch/core sees an API that a bundle carries and core cannot `require` (no node_modules).
 */
export interface OtelGlobals {
  /** The global tracer provider (the API's proxy in front of the one registered). */
  trace?: OtelApi.TracerProvider;
  metrics?: OtelApi.MeterProvider;
  /** The context manager, when one was registered (e.g. by the Node SDK). */
  context?: { active(): OtelApi.Context };
}

const GLOBALS_KEY = Symbol.for('opentelemetry.js.api.1');

/** The registered globals, or undefined when no 1.x copy of the API registered anything. */
export function readOtelGlobals(): OtelGlobals | undefined {
  const globals = (globalThis as Record<symbol, unknown>)[GLOBALS_KEY] as
    | ({ version?: unknown } & Record<string, unknown>)
    | undefined;
  if (typeof globals !== 'object' || globals === null) return undefined;
  if (typeof globals.version !== 'string' || !globals.version.startsWith('1.')) return undefined;
  const found: OtelGlobals = {};
  if (hasMethod(globals.trace, 'getTracer')) found.trace = globals.trace as OtelApi.TracerProvider;
  if (hasMethod(globals.metrics, 'getMeter')) found.metrics = globals.metrics as OtelApi.MeterProvider;
  if (hasMethod(globals.context, 'active')) found.context = globals.context as OtelGlobals['context'];
  return found;
}

function hasMethod(value: unknown, name: string): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)[name] === 'function'
  );
}
