import { describe, expect, test } from 'vitest';
import { dollarsFor, dollarsPerMillion, dollarsPerRequest } from '../src/cost.js';
import { PRICES } from '../src/prices.js';

describe('cost calculator', () => {
  test('prices the S3 request classes: PUT/LIST $0.005 per 1,000, GET $0.0004 per 1,000, DELETE free', () => {
    expect(
      dollarsFor('s3', {
        PutObject: 1000,
        ListObjectsV2: 1000,
        GetObject: 1000,
        HeadObject: 1000,
        DeleteObject: 1000,
      }),
    ).toBeCloseTo(0.005 + 0.005 + 0.0004 + 0.0004 + 0, 12);
  });

  test('two PUTs per cycle on S3 cost $10 per million cycles; GET + PUT + DELETE cost $5.40', () => {
    expect(dollarsPerMillion('s3', { PutObject: 600 }, 300)).toBeCloseTo(10, 9);
    expect(dollarsPerMillion('s3', { GetObject: 300, PutObject: 300, DeleteObject: 300 }, 300)).toBeCloseTo(
      5.4,
      9,
    );
  });

  test('the S3 list strategy is priced like S3', () => {
    expect(dollarsPerMillion('s3-list', { PutObject: 1, ListObjectsV2: 2, DeleteObject: 1 }, 1)).toBeCloseTo(
      15,
      9,
    );
  });

  test('DynamoDB on-demand: $0.625 per million writes, $0.125 per million reads', () => {
    expect(dollarsPerMillion('dynamodb', { UpdateItem: 200, PutItem: 200 }, 200)).toBeCloseTo(1.25, 9);
    expect(dollarsPerMillion('dynamodb', { GetItem: 1, PutItem: 1, DeleteItem: 1 }, 1)).toBeCloseTo(1.375, 9);
    expect(dollarsPerRequest('dynamodb', 'GetItem')).toBe(
      PRICES.dynamodbOnDemand.perMillionReadRequestUnits / 1e6,
    );
  });

  test('the in-process memory store costs nothing; Redis has no per-request price', () => {
    expect(dollarsFor('memory', { write: 1_000_000 })).toBe(0);
    expect(dollarsFor('redis', { evalsha: 10 })).toBeNull();
    expect(dollarsPerMillion('redis', { evalsha: 10 }, 5)).toBeNull();
  });

  test('no work done means no per-unit price, and an unknown DynamoDB operation is an error', () => {
    expect(dollarsPerMillion('s3', { PutObject: 2 }, 0)).toBeNull();
    expect(() => dollarsFor('dynamodb', { Scan: 1 })).toThrow(/No DynamoDB price for operation "Scan"/);
  });

  test('the price table carries its date', () => {
    expect(PRICES.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});
