import { LockConfigError } from '@latch/core';
import { Inject } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { LockRegistry } from './lock-registry.js';

// Own properties of instances that have @Locked() methods: the registry of their application,
// and the ModuleRef Nest injected (to find the registry when no explorer bound it).
const REGISTRY = Symbol('latch.lockRegistry');
const MODULE_REF = Symbol('latch.moduleRef');

interface LockBound {
  [REGISTRY]?: LockRegistry;
  [MODULE_REF]?: ModuleRef;
}

/**
 * Makes Nest check, while it creates an instance of this class, that the application has a
 * LockModule — so a missing import fails at bootstrap with a message saying what to import,
 * not at the first call. It asks Nest to inject the ModuleRef into a property whose setter
 * runs the check.
 */
export function requireLockModule(prototype: object): void {
  if (Object.hasOwn(prototype, MODULE_REF)) return;
  Object.defineProperty(prototype, MODULE_REF, {
    configurable: true,
    get: () => undefined,
    set(this: object, moduleRef: ModuleRef) {
      try {
        moduleRef.get(LockRegistry, { strict: false });
      } catch {
        throw new LockConfigError(missingLockModule(this.constructor.name));
      }
      Object.defineProperty(this, MODULE_REF, { value: moduleRef, configurable: true });
    },
  });
  Inject(ModuleRef)(prototype, MODULE_REF);
}

/** Called at bootstrap for every instance with @Locked() methods, including ones Nest did not construct (useFactory, useValue). */
export function bindLockRegistry(instance: object, registry: LockRegistry): void {
  Object.defineProperty(instance, REGISTRY, { value: registry, configurable: true });
}

/** The registry of the application that created `instance`. */
export function lockRegistryOf(instance: unknown, where: string): LockRegistry {
  const bound = (typeof instance === 'object' && instance !== null ? instance : {}) as LockBound;
  const registry = bound[REGISTRY];
  if (registry) return registry;
  const moduleRef = bound[MODULE_REF];
  if (moduleRef) {
    // Request-scoped and transient instances: bound on first use.
    const found = moduleRef.get(LockRegistry, { strict: false });
    bindLockRegistry(bound, found);
    return found;
  }
  throw new LockConfigError(
    `${where} is @Locked() but was called on an object that no Nest application with a LockModule created (or on no object at all: keep \`this\` when passing the method around). ${importHint}`,
  );
}

const importHint =
  'Import LockModule.forRoot({ store }) or LockModule.forRootAsync({ ... }) from @latch/nest in your root module (AppModule).';

function missingLockModule(className: string): string {
  return `${className} has @Locked() methods, but the application has no LockModule. ${importHint}`;
}
