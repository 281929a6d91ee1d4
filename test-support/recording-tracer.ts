/**
 * A tracer provider that keeps each span's name and attributes: all the adapters' telemetry
 * tests need of OpenTelemetry (core's own tests read real spans through the SDK's exporters).
 */
export function recordingTracer() {
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
