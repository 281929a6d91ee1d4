import { LockConfigError, memoryStore } from '@latch/core';
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
