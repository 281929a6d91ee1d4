import { LockConfigError } from '@latch/core';
import type { LockService } from './lock.service.js';
import type { LockedDefaults } from './locked-options.js';
import { DEFAULT_LOCK_CLIENT } from './tokens.js';

/** One client registered by `LockModule.forRoot()`: its service and the defaults of its `@Locked()` methods. */
export interface RegisteredLockClient {
  service: LockService;
  defaults: LockedDefaults;
}

/**
 * The lock clients of one Nest application, by name. `@Locked()` methods find their client
 * here; each `LockModule.forRoot()` registers one while the application is created.
 */
export class LockRegistry {
  private readonly clients = new Map<string, RegisteredLockClient>();

  register(name: string, client: RegisteredLockClient): void {
    if (this.clients.has(name)) {
      throw new LockConfigError(
        `LockModule registers the ${describeName(name)} twice. Call LockModule.forRoot() once per client, and give each further client its own name: LockModule.forRoot({ name: 'other', ... }).`,
      );
    }
    this.clients.set(name, client);
  }

  has(name: string): boolean {
    return this.clients.has(name);
  }

  get(name: string): RegisteredLockClient {
    const client = this.clients.get(name);
    if (!client) throw new LockConfigError(this.describeMissing(name));
    return client;
  }

  /** Says which client is missing, how to register it, and which ones exist. */
  describeMissing(name: string): string {
    const registration =
      name === DEFAULT_LOCK_CLIENT
        ? 'LockModule.forRoot({ store }) without a name'
        : `LockModule.forRoot({ name: '${name}', store })`;
    const known = [...this.clients.keys()].map((known) => `'${known}'`).join(', ');
    return `No lock client named '${name}': register it with ${registration} (or forRootAsync). Registered clients: ${known || 'none'}.`;
  }
}

function describeName(name: string): string {
  return name === DEFAULT_LOCK_CLIENT ? 'default client (no name)' : `client '${name}'`;
}
