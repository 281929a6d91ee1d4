import { LockConfigError } from '@latch/core';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { bindLockRegistry } from './lock-binding.js';
import { LockRegistry } from './lock-registry.js';
import { lockedMethodsOf } from './locked-method.js';

/**
 * At bootstrap, finds every `@Locked()` method of the application's providers and controllers:
 * fails when one names a client that no LockModule registered, and binds each instance to
 * this application's registry (also instances Nest did not construct: useFactory, useValue).
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
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null) continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      let locked = false;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        for (const spec of lockedMethodsOf((instance as Record<string, unknown>)[name])) {
          locked = true;
          if (!this.registry.has(spec.client)) {
            problems.push(`${spec.where}: ${this.registry.describeMissing(spec.client)}`);
          }
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
  }
}
