import { LockConfigError } from '@latch/core';
import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import type { LockService } from './lock.service.js';
import { LockCoreModule } from './lock-core.module.js';
import {
  checkAsyncOptionKeys,
  checkModuleIdentity,
  checkModuleSettings,
  createLockService,
  type LockModuleAsyncOptions,
  type LockModuleOptions,
  type LockModuleSettings,
} from './lock-module-options.js';
import { LockRegistry } from './lock-registry.js';
import { DEFAULT_LOCK_CLIENT, getLockServiceToken } from './tokens.js';

// Each forRoot call gets its own settings token, so that Nest never merges two calls into one
// module and a second client under the same name is reported instead of silently dropped.
let registrations = 0;

/**
 * Registers a lock client with the application: `LockModule.forRoot({ store })`, or
 * `forRootAsync({ imports, inject, useFactory })` to build it from configuration. Provides
 * LockService, enables `@Locked()` methods, and answers lock errors of HTTP requests.
 */
@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: Nest's convention for configurable modules is a class with static forRoot/forRootAsync.
export class LockModule {
  static forRoot(options: LockModuleOptions): DynamicModule {
    const label = 'LockModule.forRoot()';
    checkModuleSettings(options, label, 'forRoot');
    checkModuleIdentity(options, label);
    const { name: _name, isGlobal: _isGlobal, ...settings } = options;
    // A factory, not useValue: Nest would serialise a value (the store, its SDK client) to identify the module.
    return LockModule.build(options, { provide: settingsToken(options.name), useFactory: () => settings });
  }

  static forRootAsync(options: LockModuleAsyncOptions): DynamicModule {
    const label = 'LockModule.forRootAsync()';
    if (typeof options === 'object' && options !== null) checkAsyncOptionKeys(options, label);
    if (typeof options?.useFactory !== 'function') {
      throw new LockConfigError(
        `${label} needs useFactory: a function returning { store } (or { client }), with inject listing its dependencies.`,
      );
    }
    checkModuleIdentity(options, label);
    const token = settingsToken(options.name);
    return LockModule.build(
      options,
      {
        provide: token,
        inject: options.inject ?? [],
        useFactory: async (...args: unknown[]) => {
          const settings = await options.useFactory(...args);
          checkModuleSettings(
            settings,
            `The useFactory of ${label}${options.name ? ` (name '${options.name}')` : ''}`,
            'factory',
          );
          return settings;
        },
      },
      options.imports ?? [],
    );
  }

  private static build(
    identity: { name?: string; isGlobal?: boolean },
    settingsProvider: Provider & { provide: string },
    imports: NonNullable<DynamicModule['imports']> = [],
  ): DynamicModule {
    const name = identity.name ?? DEFAULT_LOCK_CLIENT;
    const serviceToken = getLockServiceToken(name);
    const service: Provider = {
      provide: serviceToken,
      inject: [LockRegistry, settingsProvider.provide],
      useFactory: (registry: LockRegistry, settings: LockModuleSettings): LockService => {
        const created = createLockService(settings);
        registry.register(name, { service: created, defaults: settings.defaults ?? {} });
        return created;
      },
    };
    return {
      module: LockModule,
      global: identity.isGlobal ?? true,
      imports: [LockCoreModule, ...imports],
      providers: [settingsProvider, service],
      exports: [serviceToken],
    };
  }
}

function settingsToken(name: string | undefined): string {
  registrations += 1;
  return `LockModuleSettings:${name ?? DEFAULT_LOCK_CLIENT}#${registrations}`;
}
