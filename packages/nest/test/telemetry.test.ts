import { memoryStore } from '@latch/core';
import { Injectable } from '@nestjs/common';
import { expect, test } from 'vitest';
import { recordingTracer } from '../../../test-support/recording-tracer.js';
import { Locked, LockModule } from '../src/index.js';
import { startApp } from './helpers/nest.js';

@Injectable()
class PayoutService {
  @Locked('payout:{0}')
  async run(day: string): Promise<string> {
    return `paid ${day}`;
  }
}

test("a @Locked() method's lock spans name the class and method", async () => {
  const otel = recordingTracer();
  const app = await startApp({
    imports: [
      LockModule.forRoot({ store: memoryStore(), telemetry: { tracerProvider: otel.tracerProvider } }),
    ],
    providers: [PayoutService],
  });
  try {
    expect(await app.get(PayoutService).run('2026-11-24')).toBe('paid 2026-11-24');
  } finally {
    await app.close();
  }
  for (const name of ['latch.acquire', 'latch.hold']) {
    expect(otel.spans.find((span) => span.name === name)?.attributes).toMatchObject({
      'code.function.name': 'PayoutService.run',
      'latch.lock.key': 'payout:2026-11-24',
    });
  }
});
