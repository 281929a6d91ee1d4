import { describe, expect, test } from 'vitest';
import { DemoUsageError, parseDemoOptions } from '../src/launcher/demo-options.js';

describe('launcher options', () => {
  test('defaults: the local S3 server, three replicas, a 4 s lease, port 4600', () => {
    expect(parseDemoOptions([])).toMatchObject({
      store: 's3',
      bucket: undefined,
      table: undefined,
      replicas: 3,
      leaseMs: 4000,
      port: 4600,
      restartAfterSeconds: 15,
    });
  });

  test('--store s3 --bucket means Amazon S3; --store dynamodb --table means Amazon DynamoDB', () => {
    expect(
      parseDemoOptions(['--store', 's3', '--bucket', 'my-locks', '--region', 'eu-west-1']),
    ).toMatchObject({
      store: 's3',
      bucket: 'my-locks',
      region: 'eu-west-1',
    });
    expect(parseDemoOptions(['--store', 'dynamodb', '--table', 'locks'])).toMatchObject({
      store: 'dynamodb',
      table: 'locks',
    });
  });

  test.each([
    [['--store', 'redis'], '--store must be s3, dynamodb or memory; got "redis"'],
    [['--store', 'memory', '--bucket', 'b'], '--bucket only goes with --store s3'],
    [['--table', 't'], '--table only goes with --store dynamodb'],
    [['--port', 'http'], '--port must be a whole number from 0 to 65535; got "http"'],
    [['--replicas', '1'], '--replicas must be a whole number from 2 to 5; got "1"'],
    [['--lease-ms', '100'], '--lease-ms must be a whole number from 1000 to 60000; got "100"'],
    [['--colour'], "Unknown option '--colour'"],
  ])('%j is refused: %s', (argv, message) => {
    expect(() => parseDemoOptions(argv)).toThrow(DemoUsageError);
    expect(() => parseDemoOptions(argv)).toThrow(message);
  });
});

test('a leading -- (as some package managers pass it through) is ignored', () => {
  expect(parseDemoOptions(['--', '--store', 'memory']).store).toBe('memory');
});
