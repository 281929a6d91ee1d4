// The app's OpenTelemetry set-up, bundled with it: the API and the SDK live inside the bundle,
// where @latch/core cannot `require` them, and the provider is registered globally through the
// bundled API before any LockClient is made. Each ended span becomes one `SPAN {...}` line of
// the function's log, as a log-based exporter would ship it.
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

const logExporter: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    for (const span of spans) {
      const line = {
        name: span.name,
        fencingToken: span.attributes['latch.lock.fencing_token'],
        outcome: span.attributes['latch.acquire.outcome'] ?? span.attributes['latch.hold.outcome'],
        key: span.attributes['latch.lock.key'],
        store: span.attributes['latch.store.kind'],
      };
      process.stdout.write(`SPAN ${JSON.stringify(line)}\n`);
    }
    done({ code: 0 });
  },
  async shutdown() {},
};

trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(logExporter)] }),
);
