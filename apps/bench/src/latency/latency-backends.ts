import type { BackendEndpoints } from '../backend-endpoints.js';
import { AWS_PROFILE } from './aws-profile.js';
import { type DelayProxy, startDelayProxy } from './delay-proxy.js';
import { latencySampler } from './latency-sampler.js';
import { type OperationClass, operationClass } from './operation-class.js';
import { seededRandom } from './seeded-random.js';

/** raw: the local servers as they are; aws: every S3 and DynamoDB request delayed as in AWS_PROFILE. */
export type LatencyProfile = 'raw' | 'aws';
export const LATENCY_PROFILES: readonly LatencyProfile[] = ['raw', 'aws'];

export interface LatencyBackends {
  /** The endpoints subjects should use: the proxies' in place of the S3 and DynamoDB servers'. */
  endpoints: BackendEndpoints;
  stop(): Promise<void>;
}

/**
 * Puts a delay proxy in front of each S3 server and DynamoDB Local (redis stays direct). Each
 * proxy has its own seeded random source (seed, seed + 1, ...), so a run's delays depend
 * only on the seed and the order requests arrive in.
 */
export async function withLatency(
  endpoints: BackendEndpoints,
  profile: LatencyProfile,
  seed: number,
): Promise<LatencyBackends> {
  if (profile === 'raw') return { endpoints, stop: async () => undefined };
  const proxies: DelayProxy[] = [];
  const stop = async () => {
    await Promise.allSettled(proxies.map((proxy) => proxy.stop()));
  };
  const proxied = async (target: string, service: 's3' | 'dynamodb'): Promise<string> => {
    const random = seededRandom(seed + proxies.length);
    const samplers = Object.fromEntries(
      Object.entries(AWS_PROFILE).map(([op, shape]) => [op, latencySampler(shape, random)]),
    ) as Record<OperationClass, () => number>;
    const proxy = await startDelayProxy({
      target,
      delayFor: (req) => samplers[operationClass(service, req.method, req.headers)](),
    });
    proxies.push(proxy);
    return proxy.endpoint;
  };
  try {
    const out: BackendEndpoints = { ...endpoints };
    if (endpoints.s3) out.s3 = { ...endpoints.s3, endpoint: await proxied(endpoints.s3.endpoint, 's3') };
    if (endpoints.s3Plain)
      out.s3Plain = { ...endpoints.s3Plain, endpoint: await proxied(endpoints.s3Plain.endpoint, 's3') };
    if (endpoints.dynamodb)
      out.dynamodb = {
        ...endpoints.dynamodb,
        endpoint: await proxied(endpoints.dynamodb.endpoint, 'dynamodb'),
      };
    return { endpoints: out, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
