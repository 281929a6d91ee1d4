import { LockConfigError, type LockStore, memoryStore } from '@latch/core';
import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, test } from 'vitest';
import { Locked, LockModule, LockService } from '../src/index.js';
import { startApp } from './helpers/nest.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A class with one @Locked() method, defined when called: bad options throw at definition. */
function defineLocked(options: object) {
  class Shop {
    @Locked('shop', options as never)
    async buy(): Promise<void> {}
  }
  return Shop;
}

/** Starts an application on `store` and calls LockService.acquire with `options`. */
async function acquireThroughService(store: LockStore, options: object) {
  const app = await startApp({ imports: [LockModule.forRoot({ store })] });
  closers.push(() => app.close());
  return app.get(LockService).acquire('shop', options as never);
}

type Entry = (store: LockStore) => unknown;

const CASES: Array<[what: string, entry: Entry, message: string]> = [
  [
    'LockModule.forRoot()',
    (store) => LockModule.forRoot({ store, leaseMS: 60_000 } as never),
    'LockModule.forRoot(): unknown option leaseMS; did you mean leaseMs?',
  ],
  [
    'LockModule.forRoot() with a case-only typo',
    (store) => LockModule.forRoot({ store, isglobal: false } as never),
    'LockModule.forRoot(): unknown option isglobal; did you mean isGlobal?',
  ],
  [
    'LockModule.forRoot() with a store option',
    (store) => LockModule.forRoot({ store, bucket: 'locks' } as never),
    'LockModule.forRoot(): unknown option bucket; a bucket or table goes to the store: store: s3Store({ client, bucket }) or dynamoStore({ client, table }).',
  ],
  [
    'LockModule.forRoot() defaults',
    (store) => LockModule.forRoot({ store, defaults: { waitMS: 100 } } as never),
    'LockModule.forRoot() defaults: unknown option waitMS; did you mean waitMs?',
  ],
  [
    'LockModule.forRootAsync()',
    (store) => LockModule.forRootAsync({ useFactroy: () => ({ store }) } as never),
    'LockModule.forRootAsync(): unknown option useFactroy; did you mean useFactory?',
  ],
  [
    'LockModule.forRootAsync() with a setting beside useFactory',
    (store) => LockModule.forRootAsync({ useFactory: () => ({ store }), leaseMs: 1000 } as never),
    'LockModule.forRootAsync(): unknown option leaseMs; leaseMs belongs in the settings useFactory returns, e.g. useFactory: () => ({ store, leaseMs }).',
  ],
  [
    'the settings forRootAsync() resolves',
    (store) =>
      startApp({
        imports: [LockModule.forRootAsync({ useFactory: async () => ({ store, pollMS: 500 }) as never })],
      }),
    'The useFactory of LockModule.forRootAsync(): unknown option pollMS; did you mean pollMs?',
  ],
  [
    '@Locked()',
    () => defineLocked({ waitMS: 100 }),
    '@Locked() on Shop.buy: unknown option waitMS; did you mean waitMs?',
  ],
  [
    '@Locked() with a far key',
    () => defineLocked({ retries: 3 }),
    '@Locked() on Shop.buy: unknown option retries; the options are onLocked, waitMs, leaseMs, lockAtLeastMs, failFastOnStoreError, retryAfterSeconds, client, context, limit',
  ],
  [
    '@Locked() with a misspelled limit',
    () => defineLocked({ limits: 3 }),
    '@Locked() on Shop.buy: unknown option limits; did you mean limit?',
  ],
  [
    'LockService.acquire() (core checks it)',
    (store) => acquireThroughService(store, { waitMS: 100 }),
    'acquire(): unknown option waitMS; did you mean waitMs?',
  ],
];

describe('every entry point refuses a misspelled option, naming the closest one, before any request', () => {
  test.each(CASES)('%s', async (_what, entry, message) => {
    const store = memoryStore();
    let thrown: unknown;
    try {
      await entry(store);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LockConfigError);
    expect((thrown as Error).message).toBe(message);
    expect(store.requestCount).toBe(0);
  });

  test('known options whose value is undefined are accepted, client: undefined included', async () => {
    @Injectable()
    class Jobs {
      @Locked('jobs', { waitMs: undefined, context: undefined, limit: undefined })
      async run(): Promise<string> {
        return 'ran';
      }
    }
    const app = await startApp({
      imports: [
        LockModule.forRoot({
          store: memoryStore(),
          client: undefined,
          leaseMs: undefined,
          defaults: { onLocked: undefined },
        } as never),
      ],
      providers: [Jobs],
    });
    closers.push(() => app.close());
    await expect(app.get(Jobs).run()).resolves.toBe('ran');
  });
});
