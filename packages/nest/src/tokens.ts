import { Inject } from '@nestjs/common';
import { LockService } from './lock.service.js';

/** The name of the client registered by a `LockModule.forRoot()` without a `name`. */
export const DEFAULT_LOCK_CLIENT = 'default';

/**
 * The injection token of the LockService of client `name`: the LockService class itself for
 * the default client, a string for named ones (for `Test.overrideProvider`, `moduleRef.get`).
 */
export function getLockServiceToken(name: string = DEFAULT_LOCK_CLIENT): string | typeof LockService {
  return name === DEFAULT_LOCK_CLIENT ? LockService : `LockService:${name}`;
}

/** Injects the LockService of a named client: `@InjectLockService('dynamo') locks: LockService`. */
export function InjectLockService(
  name: string = DEFAULT_LOCK_CLIENT,
): PropertyDecorator & ParameterDecorator {
  return Inject(getLockServiceToken(name));
}
