import { LockClient, type LockClientOptions, LockConfigError } from '@latch/core';
import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from '@nestjs/common';
import { describeValue } from './describe-value.js';
import { LockService } from './lock.service.js';
import { checkLockedDefaults, type LockedDefaults } from './locked-options.js';

/**
 * Where a module's locks live: a LockClient you built, or the options to build one
 * (`store` plus any LockClientOptions such as `leaseMs`), and the defaults of its
 * `@Locked()` methods.
 */
export type LockModuleSettings = ({ client: LockClient } | LockClientOptions) & {
  defaults?: LockedDefaults;
};

/** `LockModule.forRoot()` options. */
export type LockModuleOptions = LockModuleSettings & {
  /** Registers a further, named client: `@Locked(key, { client: name })`, `@InjectLockService(name)`. */
  name?: string;
  /** Make LockService injectable in every module (default true). */
  isGlobal?: boolean;
};

/** `LockModule.forRootAsync()` options: the settings come from a factory, e.g. built from ConfigService. */
export interface LockModuleAsyncOptions {
  name?: string;
  isGlobal?: boolean;
  /** Modules the factory's dependencies come from, e.g. `[ConfigModule]`. */
  imports?: ModuleMetadata['imports'];
  /** Providers passed to the factory, e.g. `[ConfigService]`. */
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  // biome-ignore lint/suspicious/noExplicitAny: the factory's parameters are whatever `inject` lists.
  useFactory: (...args: any[]) => LockModuleSettings | Promise<LockModuleSettings>;
}

/** Every LockClientOptions key, as an object so the compiler fails when core adds or drops one. */
const CLIENT_OPTIONS: Record<keyof LockClientOptions, true> = {
  store: true,
  leaseMs: true,
  heartbeatMs: true,
  owner: true,
  clock: true,
  retry: true,
  pollMs: true,
  localTurnMs: true,
  onEvent: true,
};
const CLIENT_OPTION_KEYS = Object.keys(CLIENT_OPTIONS);
const SETTINGS_KEYS = ['client', 'defaults', ...CLIENT_OPTION_KEYS];

/** Checks the name and scope of a module, at `forRoot`/`forRootAsync` time. */
export function checkModuleIdentity(options: { name?: unknown; isGlobal?: unknown }, label: string): void {
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name.length === 0)) {
    throw new LockConfigError(
      `${label}: name must be a non-empty string, got ${describeValue(options.name)}.`,
    );
  }
  if (options.isGlobal !== undefined && typeof options.isGlobal !== 'boolean') {
    throw new LockConfigError(
      `${label}: isGlobal must be true or false, got ${describeValue(options.isGlobal)}.`,
    );
  }
}

/** Checks settings without building anything (forRoot checks at once; forRootAsync when its factory resolves). */
export function checkModuleSettings(
  settings: unknown,
  label: string,
  extraKeys: readonly string[] = [],
): void {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new LockConfigError(
      `${label} needs an object with a store, such as { store: s3Store({ client, bucket }) }, or { client: new LockClient(...) }; got ${describeValue(settings)}.`,
    );
  }
  const known = [...SETTINGS_KEYS, ...extraKeys];
  const unknown = Object.keys(settings).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    throw new LockConfigError(
      `${label}: unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => `'${key}'`).join(', ')}. The options are ${known.join(', ')}${unknown.includes('bucket') || unknown.includes('table') ? ' (a bucket or table goes to the store: store: s3Store({ client, bucket }))' : ''}.`,
    );
  }
  const record = settings as Record<string, unknown>;
  if ('client' in record && record.client !== undefined) {
    const client = record.client as { withLock?: unknown } | null;
    if (typeof client !== 'object' || client === null || typeof client.withLock !== 'function') {
      throw new LockConfigError(
        `${label}: client must be a LockClient from @latch/core. To lock with an S3Client or DynamoDBClient, pass store: s3Store({ client, bucket }) or store: dynamoStore({ client, table }) instead.`,
      );
    }
    const clientOptions = CLIENT_OPTION_KEYS.filter((key) => record[key] !== undefined);
    if (clientOptions.length > 0) {
      throw new LockConfigError(
        `${label}: give either client or ${clientOptions.join(', ')}, not both: a LockClient already has its store and settings.`,
      );
    }
  } else if (record.store === undefined) {
    throw new LockConfigError(
      `${label} needs a store — memoryStore(), s3Store({ client, bucket }) or dynamoStore({ client, table }) — or a client (a LockClient).`,
    );
  }
  if (record.defaults !== undefined) checkLockedDefaults(record.defaults, label);
}

/** Builds the LockService of checked settings; core checks the client options themselves. */
export function createLockService(settings: LockModuleSettings): LockService {
  if ('client' in settings && settings.client !== undefined) return new LockService(settings.client);
  const { defaults: _defaults, ...clientOptions } = settings as LockClientOptions & { defaults?: unknown };
  return new LockService(new LockClient(clientOptions));
}
