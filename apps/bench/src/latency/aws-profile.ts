import type { LatencyShape } from './latency-sampler.js';
import type { OperationClass } from './operation-class.js';

/**
 * Round figures for a client in the same AWS region as the service, one small object or item
 * per request (the README names the pages they are drawn from):
 * - S3: AWS's S3 performance guidance puts the median of small requests (under 512 KB) in the
 *   tens of milliseconds and advises retrying a GET or PUT that has not answered in 2 s; PUTs
 *   are written durably before they answer, so they are given the slower shape.
 * - DynamoDB: AWS describes its service-side latency as single-digit milliseconds; the
 *   network hop inside a region adds about a millisecond, and the tail is a few times the median.
 * Each request's delay is log-normal with this median and 99th percentile.
 */
export const AWS_PROFILE: Readonly<Record<OperationClass, LatencyShape>> = {
  's3-get': { p50Ms: 20, p99Ms: 80 },
  's3-put': { p50Ms: 30, p99Ms: 150 },
  'dynamodb-read': { p50Ms: 5, p99Ms: 15 },
  'dynamodb-write': { p50Ms: 8, p99Ms: 25 },
};

/** The default seed of the profile's random delays: the same seed replays the same delays. */
export const DEFAULT_LATENCY_SEED = 1;
