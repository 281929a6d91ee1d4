/**
 * AWS list prices used for the cost scenario: US East (N. Virginia), as of 2026-11-23.
 * DynamoDB on-demand rates are the ones in force since the on-demand price cut of
 * 2024-11-01. Update the date with the numbers.
 */
export const PRICES = {
  asOf: '2026-11-23',
  region: 'us-east-1',
  s3Standard: {
    /** PUT, COPY, POST and LIST requests. */
    putCopyPostListPer1000: 0.005,
    /** GET, SELECT and every other request (HEAD included). */
    getAndOtherPer1000: 0.0004,
    /** DELETE and CANCEL requests are free. */
    deletePer1000: 0,
  },
  dynamodbOnDemand: {
    perMillionWriteRequestUnits: 0.625,
    perMillionReadRequestUnits: 0.125,
  },
} as const;

export type PricedBackend = 'memory' | 's3' | 's3-list' | 'dynamodb' | 'redis';
