import { LockLimitMismatchError, LockTimeoutError } from '@latch/core';
import { lockErrorToHttp } from '@latch/core/http';
import { Controller, Get, type INestApplication, Inject, Param } from '@nestjs/common';
import { describe, expect, test } from 'vitest';
import { currentLock, Locked, LockModule, LockService } from '../src/index.js';
import { backends } from './helpers/backends.js';
import { CapturingLogger } from './helpers/capturing-logger.js';
import { replicasOn } from './helpers/replicas.js';
import { Overlap, sleep, until } from './helpers/wait.js';

const LIMIT = 3;
const REQUESTS = 12;
const PROBE = 'PROBE';

/** What the test sees of the handlers, shared by both replicas (they run in this process). */
class Probe {
  readonly overlap = new Overlap();
  readonly tokens: number[] = [];
  entered = 0;
  private open!: () => void;
  /** Handlers of the 'throw' route hold their slot until `release()`. */
  readonly gate = new Promise<void>((resolve) => {
    this.open = resolve;
  });

  release(): void {
    this.open();
  }
}

// The tenant is the key: at most LIMIT reports per tenant at once, across every replica.
@Controller('tenants')
class ReportController {
  constructor(@Inject(PROBE) private readonly probe: Probe) {}

  @Get(':tenant/report')
  @Locked('report:{0}', { limit: LIMIT, waitMs: 120_000, leaseMs: 120_000 })
  async report(@Param('tenant') tenant: string): Promise<{ tenant: string }> {
    return this.probe.overlap.run(async () => {
      this.probe.tokens.push(currentLock()!.fencingToken);
      await sleep(300); // hold long enough for the other holders to come in beside it
      return { tenant };
    });
  }

  @Get(':tenant/export')
  @Locked('export:{0}', { limit: LIMIT, onLocked: 'throw', leaseMs: 120_000 })
  async export(@Param('tenant') tenant: string): Promise<{ tenant: string }> {
    if (tenant !== 'acme') return { tenant };
    return this.probe.overlap.run(async () => {
      this.probe.entered++;
      await this.probe.gate;
      return { tenant };
    });
  }
}

// The export route as a newer version deploys it, with another limit: on one replica only, mid-rollout.
@Controller('tenants')
class ExportControllerV2 {
  @Get(':tenant/export')
  @Locked('export:{0}', { limit: 5, onLocked: 'throw', leaseMs: 120_000 })
  async export(@Param('tenant') tenant: string): Promise<{ tenant: string }> {
    return { tenant };
  }
}

describe.each(backends)('@Locked(key, { limit }) over HTTP, two replicas on the $name', ({ start }) => {
  const apps = replicasOn(start);

  /** Two Nest applications, each with its own LockClient, listening on ports of their own. */
  async function replicas(probe: Probe): Promise<[string, string]> {
    const urls: string[] = [];
    for (const owner of ['replica-a', 'replica-b']) {
      const app: INestApplication = await apps.start({
        imports: [LockModule.forRoot({ store: apps.store, owner, pollMs: 50 })],
        controllers: [ReportController],
        providers: [{ provide: PROBE, useValue: probe }],
      });
      await app.listen(0, '127.0.0.1');
      urls.push(await app.getUrl());
    }
    return urls as [string, string];
  }

  test(`under 'wait', ${REQUESTS} parallel requests for one tenant all succeed, ${LIMIT} at a time`, async () => {
    const probe = new Probe();
    const [a, b] = await replicas(probe);

    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) => fetch(`${i % 2 ? a : b}/tenants/acme/report`)),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(REQUESTS).fill(200));
    // Never more than the limit at once, and the limit was used: more than one at a time.
    expect(probe.overlap.max).toBe(LIMIT);
    // Each call held its own acquisition: a fencing token of its own.
    expect(new Set(probe.tokens).size).toBe(REQUESTS);
  });

  test(`under 'throw', ${LIMIT} of ${REQUESTS} parallel requests run; the rest get 429 with Retry-After, and another tenant is not limited`, async () => {
    const probe = new Probe();
    const [a, b] = await replicas(probe);

    let refused = 0;
    const requests = Array.from({ length: REQUESTS }, (_, i) =>
      fetch(`${i % 2 ? a : b}/tenants/acme/export`).then(async (response) => {
        if (response.status !== 200) refused++;
        return { response, body: (await response.json()) as Record<string, unknown> };
      }),
    );
    await until(() => probe.entered + refused === REQUESTS);

    // While acme's slots are all taken, another tenant goes ahead on either replica.
    for (const url of [a, b]) {
      const other = await fetch(`${url}/tenants/globex/export`);
      expect(other.status).toBe(200);
      expect(await other.json()).toEqual({ tenant: 'globex' });
    }

    probe.release();
    const results = await Promise.all(requests);
    expect(probe.overlap.max).toBe(LIMIT);
    expect(results.filter((r) => r.response.status === 200)).toHaveLength(LIMIT);
    const limited = results.filter((r) => r.response.status === 429);
    expect(limited).toHaveLength(REQUESTS - LIMIT);
    // Core's answer to a full semaphore, as every Latch web adapter sends it.
    const expected = lockErrorToHttp(new LockTimeoutError('export:acme', 0, undefined, { limit: LIMIT }))!;
    expect(expected.status).toBe(429);
    for (const { response, body } of limited) {
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(response.headers.get('retry-after')).toBe(expected.headers['Retry-After']);
      expect(body).toEqual(expected.body);
    }
  });

  test("a replica whose limit differs from the holders' answers 500 lock-limit-mismatch, and logs it once per key and limits", async () => {
    const probe = new Probe();
    const a = await apps.start({
      imports: [LockModule.forRoot({ store: apps.store, owner: 'replica-a', pollMs: 50 })],
      controllers: [ReportController],
      providers: [{ provide: PROBE, useValue: probe }],
    });
    await a.listen(0, '127.0.0.1');
    const logger = new CapturingLogger();
    const b = await apps.start(
      {
        imports: [LockModule.forRoot({ store: apps.store, owner: 'replica-b', pollMs: 50 })],
        controllers: [ExportControllerV2],
      },
      logger,
    );
    await b.listen(0, '127.0.0.1');
    // Replica A holds acme's export (a request in progress) and globex's (by hand), with limit 3.
    const held = fetch(`${await a.getUrl()}/tenants/acme/export`);
    await until(() => probe.entered === 1);
    const byHand = await a.get(LockService).acquire('export:globex', { limit: LIMIT });

    const responses = [];
    for (const tenant of ['acme', 'acme', 'globex']) {
      responses.push(await fetch(`${await b.getUrl()}/tenants/${tenant}/export`));
    }
    probe.release();
    expect((await held).status).toBe(200);
    await byHand.release();

    const expected = lockErrorToHttp(new LockLimitMismatchError('export:acme', LIMIT, 5, ''))!;
    for (const response of responses) {
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toEqual({
        ...expected.body,
        type: 'urn:latch:problem:lock-limit-mismatch',
      });
    }
    // The operator learns which key and which limits, at error level; a repeat is not logged again.
    expect(logger.latch()).toEqual([
      {
        level: 'error',
        message: expect.stringMatching(
          /^GET \/tenants\/acme\/export answered 500: lock limit mismatch: Lock "export:acme" is held with limit 3, and this call asked for limit 5\. /,
        ),
      },
      {
        level: 'error',
        message: expect.stringMatching(
          /^GET \/tenants\/globex\/export answered 500: lock limit mismatch: Lock "export:globex" is held with limit 3, and this call asked for limit 5\. /,
        ),
      },
    ]);
  });
});
