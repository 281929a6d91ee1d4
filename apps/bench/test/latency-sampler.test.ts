import { describe, expect, test } from 'vitest';
import { AWS_PROFILE } from '../src/latency/aws-profile.js';
import { latencySampler } from '../src/latency/latency-sampler.js';
import { operationClass } from '../src/latency/operation-class.js';
import { seededRandom } from '../src/latency/seeded-random.js';
import { percentile } from '../src/stats.js';

const draw = (sample: () => number, count: number) => Array.from({ length: count }, sample);

describe('latency sampler', () => {
  test('the same seed gives the same samples, another seed others', () => {
    const shape = { p50Ms: 20, p99Ms: 80 };
    const a = draw(latencySampler(shape, seededRandom(7)), 50);
    const b = draw(latencySampler(shape, seededRandom(7)), 50);
    const c = draw(latencySampler(shape, seededRandom(8)), 50);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  test('the seeded source is uniform on [0, 1)', () => {
    const values = draw(seededRandom(3), 20_000);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
    expect(mean).toBeGreaterThan(0.49);
    expect(mean).toBeLessThan(0.51);
  });

  test.each(Object.entries(AWS_PROFILE))(
    '%s: p50 and p99 of many samples are near the stated ones',
    (_, shape) => {
      const samples = draw(latencySampler(shape, seededRandom(42)), 100_000);
      expect(samples.every((ms) => ms > 0)).toBe(true);
      expect(percentile(samples, 50)).toBeGreaterThan(shape.p50Ms * 0.9);
      expect(percentile(samples, 50)).toBeLessThan(shape.p50Ms * 1.1);
      expect(percentile(samples, 99)).toBeGreaterThan(shape.p99Ms * 0.85);
      expect(percentile(samples, 99)).toBeLessThan(shape.p99Ms * 1.15);
    },
  );

  test('a shape without a sensible median and tail is refused', () => {
    expect(() => latencySampler({ p50Ms: 0, p99Ms: 10 }, Math.random)).toThrow('0 < p50 <= p99');
    expect(() => latencySampler({ p50Ms: 10, p99Ms: 5 }, Math.random)).toThrow('0 < p50 <= p99');
  });
});

describe('operation class', () => {
  test('S3 by method, DynamoDB by X-Amz-Target', () => {
    expect(operationClass('s3', 'GET', {})).toBe('s3-get');
    expect(operationClass('s3', 'HEAD', {})).toBe('s3-get');
    expect(operationClass('s3', 'PUT', {})).toBe('s3-put');
    expect(operationClass('s3', 'DELETE', {})).toBe('s3-put');
    const target = (op: string) => ({ 'x-amz-target': `DynamoDB_20120810.${op}` });
    expect(operationClass('dynamodb', 'POST', target('GetItem'))).toBe('dynamodb-read');
    expect(operationClass('dynamodb', 'POST', target('Scan'))).toBe('dynamodb-read');
    expect(operationClass('dynamodb', 'POST', target('PutItem'))).toBe('dynamodb-write');
    expect(operationClass('dynamodb', 'POST', target('UpdateItem'))).toBe('dynamodb-write');
    expect(operationClass('dynamodb', 'POST', {})).toBe('dynamodb-write');
  });
});
