import { LockClient, memoryStore } from '@latch/core';
import type { Job } from 'bullmq';
import { expect, test } from 'vitest';
import { recordingTracer } from '../../../test-support/recording-tracer.js';
import { withLock } from '../src/index.js';

test("a job's lock spans carry its queue, job name and id", async () => {
  const otel = recordingTracer();
  const client = new LockClient({ store: memoryStore(), telemetry: { tracerProvider: otel.tracerProvider } });
  const processor = withLock<{ invoice: string }, string>(async (job) => `sent ${job.data.invoice}`, {
    client,
    key: (job) => `invoice:${job.data.invoice}`,
  });
  // The processor as a Worker calls it; only the fields the lock reads are set.
  const job = { id: '7', name: 'send-invoice', queueName: 'billing', data: { invoice: 'A-1' } };
  expect(await processor(job as Job<{ invoice: string }, string>, 'token')).toBe('sent A-1');
  await client.close();

  for (const name of ['latch.acquire', 'latch.hold']) {
    expect(otel.spans.find((span) => span.name === name)?.attributes).toMatchObject({
      'bullmq.queue.name': 'billing',
      'bullmq.job.name': 'send-invoice',
      'bullmq.job.id': '7',
    });
  }
});
