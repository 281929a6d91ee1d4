import { LockClient, LockTimeoutError } from '@latch/core';
import { type INestApplication, Inject, Injectable } from '@nestjs/common';
import { beforeEach, describe, expect, test } from 'vitest';
import { currentLock, Locked, LockedException, LockModule, LockService } from '../src/index.js';
import { backends } from './helpers/backends.js';
import { replicasOn } from './helpers/replicas.js';
import { Overlap, sleep } from './helpers/wait.js';

const REPLICA = 'REPLICA';
const OVERLAP = 'OVERLAP';

@Injectable()
class InvoiceService {
  constructor(
    @Inject(REPLICA) readonly replica: string,
    @Inject(OVERLAP) private readonly overlap: Overlap,
  ) {}

  @Locked('invoice:{0}', { waitMs: 120_000 })
  async charge(invoiceId: string): Promise<{ replica: string; token: number; key: string }> {
    return this.overlap.run(async () => {
      // Long enough that calls would overlap without the lock.
      await sleep(10);
      const lock = currentLock();
      return { replica: this.replica, token: lock!.fencingToken, key: `${lock!.key} (${invoiceId})` };
    });
  }

  // A synchronous method: it keeps `this`, and its result comes back as a Promise.
  @Locked('user:{0.id}')
  rename(user: { id: string }, name: string): string {
    const lock = currentLock();
    return `${this.replica} renamed ${user.id} to ${name} under ${lock?.key} #${lock?.fencingToken}`;
  }

  @Locked('export:{0}', { onLocked: 'throw' })
  async export(id: string): Promise<string> {
    return `exported ${id}`;
  }

  @Locked('sync:{0}', { onLocked: 'skip', lockAtLeastMs: 60_000 })
  async sync(id: string): Promise<string> {
    return `synced ${id} as #${currentLock()?.fencingToken}`;
  }
}

describe.each(backends)('two Nest applications sharing the $name are two replicas', ({ start }) => {
  const apps = replicasOn(start);
  let overlap: Overlap;

  async function replica(name: string): Promise<INestApplication> {
    return apps.start({
      imports: [LockModule.forRoot({ store: apps.store, owner: name })],
      providers: [
        InvoiceService,
        { provide: REPLICA, useValue: name },
        { provide: OVERLAP, useValue: overlap },
      ],
    });
  }

  beforeEach(() => {
    overlap = new Overlap();
  });

  test('a decorated service method runs one call at a time across both replicas', async () => {
    const a = (await replica('replica-a')).get(InvoiceService);
    const b = (await replica('replica-b')).get(InvoiceService);
    const calls = Array.from({ length: 8 }, () => [a.charge('inv-1'), b.charge('inv-1')]).flat();
    const results = await Promise.all(calls);

    expect(overlap.runs).toBe(16);
    expect(overlap.max).toBe(1);
    // Every call held its own acquisition: 16 distinct tokens (a replica that passes the lock
    // among its own calls takes reserved tokens, so the numbers need not be 1..16).
    expect(new Set(results.map((r) => r.token)).size).toBe(16);
    expect(results.filter((r) => r.replica === 'replica-a')).toHaveLength(8);
    expect(results.filter((r) => r.replica === 'replica-b')).toHaveLength(8);
    expect(new Set(results.map((r) => r.key))).toEqual(new Set(['invoice:inv-1 (inv-1)']));
  });

  test('calls for different keys do not wait for each other', async () => {
    const appA = await replica('replica-a');
    const b = (await replica('replica-b')).get(InvoiceService);
    // Replica A holds invoice:inv-2 by hand; replica B can still charge inv-3 at once.
    const held = await appA.get(LockService).acquire('invoice:inv-2');
    await expect(b.charge('inv-3')).resolves.toMatchObject({ key: 'invoice:inv-3 (inv-3)', token: 1 });
    await held.release();
  });

  test('currentLock() gives the fencing token of the acquisition the call holds', async () => {
    const appA = await replica('replica-a');
    const a = appA.get(InvoiceService);
    const b = (await replica('replica-b')).get(InvoiceService);
    const locks = appA.get(LockService);

    expect((await a.charge('inv-7')).token).toBe(1);
    expect((await b.charge('inv-7')).token).toBe(2);
    expect((await a.charge('inv-7')).token).toBe(3);
    expect(await locks.inspect('invoice:inv-7')).toMatchObject({ state: 'free', fencingToken: 3 });
    // Outside a @Locked() method there is no current lock.
    expect(currentLock()).toBeUndefined();
  });

  test('a synchronous method keeps `this`, and its result comes back as a Promise', async () => {
    const a = (await replica('replica-a')).get(InvoiceService);
    const result = a.rename({ id: 'u-1' }, 'Ada');
    expect(result).toBeInstanceOf(Promise);
    expect(await result).toBe('replica-a renamed u-1 to Ada under user:u-1 #1');
    expect(InvoiceService.prototype.rename.name).toBe('rename');
  });

  test("onLocked 'throw' rejects with a LockedException while another replica holds the key", async () => {
    const appA = await replica('replica-a');
    const b = (await replica('replica-b')).get(InvoiceService);
    const held = await appA.get(LockService).acquire('export:e-1', { leaseMs: 30_000 });

    const error = await b.export('e-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockedException);
    expect(error).toMatchObject({ key: 'export:e-1' });
    expect((error as LockedException).getStatus()).toBe(423);
    expect((error as LockedException).cause).toBeInstanceOf(LockTimeoutError);
    // The log message names the holder (by its context: the method or code that holds it).
    expect((error as Error).message).toContain('export:e-1');

    await held.release();
    await expect(b.export('e-1')).resolves.toBe('exported e-1');
  });

  test("onLocked 'skip' returns undefined without running, and lockAtLeastMs keeps the lock after the method returned", async () => {
    const a = (await replica('replica-a')).get(InvoiceService);
    const b = (await replica('replica-b')).get(InvoiceService);

    await expect(a.sync('s-1')).resolves.toBe('synced s-1 as #1');
    // The method returned, but the lock stays held for lockAtLeastMs: the other replica skips.
    const observer = new LockClient({ store: apps.store });
    expect(await observer.inspect('sync:s-1')).toMatchObject({ state: 'held', fencingToken: 1 });
    await expect(b.sync('s-1')).resolves.toBeUndefined();
    await expect(a.sync('s-1')).resolves.toBeUndefined();
    expect((await observer.inspect('sync:s-1')).fencingToken).toBe(1);
    // Another key is free.
    await expect(b.sync('s-2')).resolves.toBe('synced s-2 as #1');
  });
});
