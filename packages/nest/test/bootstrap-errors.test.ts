import { S3Client } from '@aws-sdk/client-s3';
import { type LockClientOptions, LockConfigError, memoryStore, s3ListStore } from '@latch/core';
import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { afterEach, describe, expect, test } from 'vitest';
import { Locked, LockModule } from '../src/index.js';
import { startApp } from './helpers/nest.js';

@Injectable()
class BillingService {
  @Locked('invoice:{0}')
  async charge(id: string): Promise<string> {
    return `charged ${id}`;
  }
}

@Controller('billing')
class BillingController {
  @Get(':id')
  @Locked('invoice:{0}')
  show(id: string): string {
    return id;
  }
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('a missing LockModule fails at bootstrap, saying what to import', () => {
  test('for a provider with @Locked methods', async () => {
    const failure = startApp({ providers: [BillingService] });
    await expect(failure).rejects.toThrow(LockConfigError);
    await expect(failure).rejects.toThrow(
      'BillingService has @Locked() methods, but the application has no LockModule. Import LockModule.forRoot({ store }) or LockModule.forRootAsync({ ... }) from @latch/nest in your root module (AppModule).',
    );
  });

  test('for a controller, and for a provider deep in a feature module', async () => {
    await expect(startApp({ controllers: [BillingController] })).rejects.toThrow(
      /BillingController has @Locked\(\) methods, but the application has no LockModule/,
    );
    @Module({ providers: [BillingService] })
    class BillingModule {}
    @Module({ imports: [BillingModule] })
    class FeaturesModule {}
    await expect(startApp({ imports: [FeaturesModule] })).rejects.toThrow(/Import LockModule\.forRoot/);
  });

  test('the same application starts once LockModule is imported, in any module', async () => {
    @Module({ imports: [LockModule.forRoot({ store: memoryStore() })], providers: [BillingService] })
    class BillingModule {}
    const app = await startApp({ imports: [BillingModule] });
    closers.push(() => app.close());
    await expect(app.get(BillingService).charge('7')).resolves.toBe('charged 7');
  });

  test('an instance created outside Nest says why it cannot lock when called', async () => {
    await expect(new BillingService().charge('7')).rejects.toThrow(
      /BillingService\.charge is @Locked\(\) but was called on an object that no Nest application with a LockModule created/,
    );
  });
});

test('a @Locked method naming an unregistered client fails at bootstrap', async () => {
  @Injectable()
  class AuditService {
    @Locked('audit', { client: 'dynamo' })
    async write(): Promise<void> {}
  }
  await expect(
    startApp({ imports: [LockModule.forRoot({ store: memoryStore() })], providers: [AuditService] }),
  ).rejects.toThrow(
    "AuditService.write: No lock client named 'dynamo': register it with LockModule.forRoot({ name: 'dynamo', store }) (or forRootAsync). Registered clients: 'default'.",
  );
});

describe('an invalid key template fails when the class is defined, before the application starts', () => {
  test.each([
    ['invoice:{0', "@Locked('invoice:{0') on Shop.buy: invalid placeholder at position 8"],
    ['invoice:{}', 'invalid placeholder at position 8'],
    ['invoice:{id}', 'invalid placeholder at position 8. Write {0} for the first argument'],
    ['invoice:{0.}', 'invalid placeholder'],
    ['invoice:{0.1x}', 'invalid placeholder'],
    ['invoice:0}', "'}' at position 9 closes no placeholder"],
    [
      'invoice:{2}',
      "@Locked('invoice:{2}') on Shop.buy uses {2}, but Shop.buy declares 2 parameters ({0} to {1})",
    ],
    ['', '@Locked() on Shop.buy needs a key'],
  ])('%j', (template, message) => {
    const define = () => {
      class Shop {
        @Locked(template)
        async buy(_id: string, _count: number): Promise<void> {}
      }
      return Shop;
    };
    expect(define).toThrow(LockConfigError);
    expect(define).toThrow(message);
  });

  test('a placeholder past the parameters of a one-parameter method', () => {
    expect(() => {
      class Shop {
        @Locked('cart:{1}')
        async checkout(_cart: string): Promise<void> {}
      }
      return Shop;
    }).toThrow('Shop.checkout declares 1 parameter ({0})');
  });
});

describe('invalid @Locked options fail when the class is defined', () => {
  test.each([
    [{ onLocked: 'later' }, "onLocked must be 'wait', 'skip' or 'throw', got \"later\""],
    [{ onLocked: 'skip', waitMs: 1000 }, "waitMs applies only to onLocked: 'wait'; 'skip' never waits"],
    [{ waitMs: -1 }, 'waitMs must be a number of milliseconds >= 0'],
    [{ leaseMs: 0 }, 'leaseMs must be a number of milliseconds > 0'],
    [
      { lockAtLeastMs: Number.POSITIVE_INFINITY },
      'lockAtLeastMs must be a finite number of milliseconds > 0',
    ],
    [{ client: '' }, 'client must be the name given to LockModule.forRoot({ name })'],
    [{ wait: 1000 }, '@Locked() on Shop.buy: unknown option wait; did you mean waitMs?'],
  ])('%j', (options, message) => {
    expect(() => {
      class Shop {
        @Locked('shop', options as never)
        async buy(): Promise<void> {}
      }
      return Shop;
    }).toThrow(message);
  });

  test('static methods, getters', () => {
    expect(() => {
      class Shop {
        @Locked('shop')
        static async buy(): Promise<void> {}
        readonly open = true;
      }
      return Shop;
    }).toThrow('@Locked() cannot go on the static method Shop.buy');
    expect(() => {
      class Shop {
        @Locked('shop')
        get total(): number {
          return 1;
        }
      }
      return Shop;
    }).toThrow('@Locked() goes on methods; Shop.total is a getter, setter or property.');
  });
});

describe('@Locked options the lock client refuses fail at bootstrap, checked by the client itself', () => {
  /** An application whose Shop.buy is @Locked with `options`, on a client with `store`. */
  function startShop(options: object, store: LockClientOptions['store'] = memoryStore()) {
    @Injectable()
    class Shop {
      @Locked('shop', options as never)
      async buy(): Promise<void> {}
    }
    return startApp({ imports: [LockModule.forRoot({ store })], providers: [Shop] });
  }

  // The limit is core's to check (LockClient.checkAcquireOptions): its words, after the method.
  test.each([
    ['zero', { limit: 0 }, 'got 0.'],
    ['over 100', { limit: 101 }, 'got 101.'],
    ['fractional', { limit: 2.5 }, 'got 2.5.'],
    ['text', { limit: '3' }, 'got "3".'],
    ['NaN', { limit: Number.NaN }, 'got NaN.'],
  ])('a limit that is %s', async (_what, options, got) => {
    const failure = startShop(options);
    await expect(failure).rejects.toThrow(LockConfigError);
    await expect(failure).rejects.toThrow(
      `@Locked() on Shop.buy: limit must be a whole number from 1 (a lock) to 100, ${got} It is how many may hold the key at once.`,
    );
  });

  test('a limit on s3ListStore, which keeps no semaphore', async () => {
    // Nothing is sent: the endpoint is never reached.
    const sdk = new S3Client({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:1',
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'example' },
    });
    try {
      const store = s3ListStore({ client: sdk, bucket: 'locks', prefix: 'locks/' });
      await expect(startShop({ limit: 2 }, store)).rejects.toThrow(
        /^@Locked\(\) on Shop\.buy: limit 2 is not available with the S3 list strategy: .* Use s3Store \(S3 with conditional writes\) or dynamoStore, or leave limit at 1\.$/,
      );
      const app = await startShop({ limit: 1 }, store);
      closers.push(() => app.close());
    } finally {
      sdk.destroy();
    }
  });

  test('every method the client refuses is named, in one error', async () => {
    @Injectable()
    class Reports {
      @Locked('daily', { limit: 0 })
      async daily(): Promise<void> {}

      @Locked('weekly', { limit: 200 })
      async weekly(): Promise<void> {}

      @Locked('monthly', { limit: 3 })
      async monthly(): Promise<void> {}
    }
    const failure = startApp({
      imports: [LockModule.forRoot({ store: memoryStore() })],
      providers: [Reports],
    });
    await expect(failure).rejects.toThrow(
      /^@Locked\(\) methods have options their lock client refuses:\n- @Locked\(\) on Reports\.daily: limit must .* got 0\. .*\n- @Locked\(\) on Reports\.weekly: limit must .* got 200\. [^\n]*$/,
    );
  });
});

describe('invalid LockModule options fail before the application starts', () => {
  test.each([
    [{}, 'LockModule.forRoot() needs a store'],
    [{ client: { send() {} } }, 'client must be a LockClient from @latch/core. To lock with an S3Client'],
    [
      { store: memoryStore(), bucket: 'locks' },
      'LockModule.forRoot(): unknown option bucket; a bucket or table goes to the store: store: s3Store({ client, bucket })',
    ],
    [{ store: memoryStore(), name: '' }, 'name must be a non-empty string'],
    [
      { store: memoryStore(), defaults: { onLocked: 'throw', waitMs: 5 } },
      "waitMs applies only to onLocked: 'wait'",
    ],
    [
      { store: memoryStore(), defaults: { limit: 3 } },
      'LockModule.forRoot() defaults: unknown option limit; a limit belongs to the keys one method locks, so it is given per method: @Locked(key, { limit }).',
    ],
  ])('%j', (options, message) => {
    expect(() => LockModule.forRoot(options as never)).toThrow(LockConfigError);
    expect(() => LockModule.forRoot(options as never)).toThrow(message);
  });

  test('core checks the client options at bootstrap', async () => {
    await expect(
      startApp({ imports: [LockModule.forRoot({ store: memoryStore(), leaseMs: -5 })] }),
    ).rejects.toThrow(LockConfigError);
  });

  test('two clients under one name', async () => {
    await expect(
      startApp({
        imports: [
          LockModule.forRoot({ name: 'jobs', store: memoryStore() }),
          LockModule.forRoot({ name: 'jobs', store: memoryStore() }),
        ],
      }),
    ).rejects.toThrow("LockModule registers the client 'jobs' twice");
  });
});
