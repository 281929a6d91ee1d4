import { LockConfigError } from '@latch/core';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { bindLockRegistry } from './lock-binding.js';
import { LockRegistry } from './lock-registry.js';
import { refusedLockedOptions } from './locked-acquire-options.js';
import { type LockedMethod, lockedMethodsOf } from './locked-method.js';

/**
 * At bootstrap, finds every `@Locked()` method of the application's providers and controllers:
 * fails when one names a client that no LockModule registered, or has options its client
 * refuses (checked by the client as its calls would be: a `limit` out of range, or one the
 * store cannot keep), and binds each instance to this application's registry (also instances
 * Nest did not construct: useFactory, useValue).
 */
@Injectable()
export class LockExplorer implements OnModuleInit {
  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
    @Inject(LockRegistry) private readonly registry: LockRegistry,
  ) {}

  onModuleInit(): void {
    const problems: string[] = [];
    const refused: string[] = [];
    // A class provided in several modules has one set of methods: each is checked once.
    const checked = new Set<LockedMethod>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null) continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      let locked = false;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        for (const spec of lockedMethodsOf((instance as Record<string, unknown>)[name])) {
          locked = true;
          if (checked.has(spec)) continue;
          checked.add(spec);
          if (!this.registry.has(spec.client)) {
            problems.push(`${spec.where}: ${this.registry.describeMissing(spec.client)}`);
            continue;
          }
          const refusal = refusedLockedOptions(spec, this.registry.get(spec.client));
          if (refusal) refused.push(refusal);
        }
      }
      // Request-scoped and transient instances find the registry through their ModuleRef.
      if (locked && wrapper.isDependencyTreeStatic()) bindLockRegistry(instance, this.registry);
    }
    if (problems.length > 0) {
      throw new LockConfigError(
        `@Locked() methods name lock clients that do not exist:\n- ${problems.join('\n- ')}`,
      );
    }
    if (refused.length === 1) throw new LockConfigError(refused[0]!);
    if (refused.length > 1) {
      throw new LockConfigError(
        `@Locked() methods have options their lock client refuses:\n- ${refused.join('\n- ')}`,
      );
    }
  }
}
