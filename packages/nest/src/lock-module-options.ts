import { checkOptionKeys, LockClient, type LockClientOptions, LockConfigError } from '@latch/core';
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
  storeErrorWaitMs: true,
  onEvent: true,
  telemetry: true,
};
const CLIENT_OPTION_KEYS = Object.keys(CLIENT_OPTIONS);

/** Every key of any member of a union (`keyof` of a union gives only the keys all members share). */
type KeysOfUnion<T> = T extends unknown ? keyof T : never;

/** What forRootAsync's factory may return: the compiler fails here when LockModuleSettings gains a key not listed. */
const SETTINGS_OPTIONS: Record<KeysOfUnion<LockModuleSettings>, true> = {
  client: true,
  defaults: true,
  ...CLIENT_OPTIONS,
};
const SETTINGS_KEYS = Object.keys(SETTINGS_OPTIONS);

/** What forRoot takes: the settings, and the module's name and scope. */
const FOR_ROOT_OPTIONS: Record<KeysOfUnion<LockModuleOptions>, true> = {
  ...SETTINGS_OPTIONS,
  name: true,
  isGlobal: true,
};
const FOR_ROOT_KEYS = Object.keys(FOR_ROOT_OPTIONS);

/** What forRootAsync takes. */
const FOR_ROOT_ASYNC_OPTIONS: Record<keyof LockModuleAsyncOptions, true> = {
  name: true,
  isGlobal: true,
  imports: true,
  inject: true,
  useFactory: true,
};
const FOR_ROOT_ASYNC_KEYS = Object.keys(FOR_ROOT_ASYNC_OPTIONS);

/** Keys that are known mistakes, with what to do instead of a "did you mean". */
const STORE_HINT =
  'a bucket or table goes to the store: store: s3Store({ client, bucket }) or dynamoStore({ client, table }).';
const MODULE_HINTS: Readonly<Record<string, string>> = {
  bucket: STORE_HINT,
  table: STORE_HINT,
  prefix: 'a prefix goes to the store: store: s3Store({ client, bucket, prefix }).',
};
const ASYNC_HINTS: Readonly<Record<string, string>> = {
  ...MODULE_HINTS,
  ...Object.fromEntries(
    SETTINGS_KEYS.map((key) => [
      key,
      `${key} belongs in the settings useFactory returns, e.g. useFactory: () => ({ store, leaseMs }).`,
    ]),
  ),
};
const FACTORY_HINTS: Readonly<Record<string, string>> = {
  ...MODULE_HINTS,
  name: 'name goes next to useFactory: forRootAsync({ name, useFactory }).',
  isGlobal: 'isGlobal goes next to useFactory: forRootAsync({ isGlobal, useFactory }).',
};

/** Refuses unknown keys of forRootAsync() itself, pointing settings put beside useFactory into it. */
export function checkAsyncOptionKeys(options: object, label: string): void {
  checkOptionKeys(label, options, FOR_ROOT_ASYNC_KEYS, ASYNC_HINTS);
}

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

/**
 * Checks settings without building anything: forRoot's options at once (`from: 'forRoot'`,
 * where name and isGlobal belong too), forRootAsync's when its factory resolves.
 */
export function checkModuleSettings(settings: unknown, label: string, from: 'forRoot' | 'factory'): void {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new LockConfigError(
      `${label} needs an object with a store, such as { store: s3Store({ client, bucket }) }, or { client: new LockClient(...) }; got ${describeValue(settings)}.`,
    );
  }
  if (from === 'forRoot') checkOptionKeys(label, settings, FOR_ROOT_KEYS, MODULE_HINTS);
  else checkOptionKeys(label, settings, SETTINGS_KEYS, FACTORY_HINTS);
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
  // `client: undefined` counts as no client; it must not reach LockClient, which knows no such option.
  const {
    defaults: _defaults,
    client: _client,
    ...clientOptions
  } = settings as LockClientOptions & { defaults?: unknown; client?: unknown };
  return new LockService(new LockClient(clientOptions));
}
