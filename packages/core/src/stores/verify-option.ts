import { LockConfigError } from '../shared/errors.js';
import { describe } from '../shared/validation.js';
import { customEndpoint } from './aws-endpoint.js';

/**
 * The `verify` option of the AWS stores: check the store with `verifyStore` before a client's
 * first lock. 'auto' (the default) checks an endpoint that is not AWS's own.
 */
export type VerifyOption = boolean | 'auto';

export function checkVerifyOption(factory: string, value: unknown = 'auto'): VerifyOption {
  if (value !== true && value !== false && value !== 'auto') {
    throw new LockConfigError(`${factory} \`verify\` must be true, false or 'auto', got ${describe(value)}.`);
  }
  return value;
}

/** The name a store is checked under (`what` at its endpoint), or undefined when it is not to be checked. */
export async function verifyScopeOf(
  verify: VerifyOption,
  client: unknown,
  what: string,
): Promise<string | undefined> {
  if (verify === false) return undefined;
  const endpoint = await customEndpoint(client);
  if (endpoint === undefined && verify === 'auto') return undefined;
  return `${what} at ${endpoint ?? 'AWS'}`;
}
