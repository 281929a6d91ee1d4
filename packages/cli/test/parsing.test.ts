import { describe, expect, test } from 'vitest';
import { s3PathStyle } from '../src/aws-settings.js';
import { formatDuration } from '../src/duration.js';
import { defaultContext, defaultLockName } from '../src/github-defaults.js';
import { main, parseDuration, parseStoreUrl, UsageError } from '../src/index.js';

describe('durations', () => {
  test.each([
    ['500ms', 500],
    ['90s', 90_000],
    ['15m', 900_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['2d', 172_800_000],
  ])('%s is %i ms', (text, ms) => {
    expect(parseDuration('--lease', text)).toBe(ms);
  });

  test.each(['', '15', '15 m', 'm15', '-5s', '1x', '0s', '0'])('%j is refused as a lease', (text) => {
    expect(() => parseDuration('--lease', text)).toThrow(UsageError);
  });

  test('0 is allowed where it means one try', () => {
    expect(parseDuration('--wait', '0', { allowZero: true })).toBe(0);
    expect(parseDuration('--wait', '0s', { allowZero: true })).toBe(0);
  });

  test('messages name the flag and the value', () => {
    expect(() => parseDuration('--poll', '5 seconds')).toThrow(
      '--poll must be a duration like 500ms, 90s, 15m, 1h or 1h30m, got "5 seconds".',
    );
  });

  test.each([
    [500, '500ms'],
    [90_000, '1m30s'],
    [900_000, '15m'],
    [5_400_000, '1h30m'],
  ])('%i ms reads as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('store URLs', () => {
  test.each([
    ['s3://ci-locks', { kind: 's3', bucket: 'ci-locks', prefix: '' }],
    ['s3://ci-locks/', { kind: 's3', bucket: 'ci-locks', prefix: '' }],
    ['s3://ci-locks/locks', { kind: 's3', bucket: 'ci-locks', prefix: 'locks/' }],
    ['s3://ci-locks/team/a/', { kind: 's3', bucket: 'ci-locks', prefix: 'team/a/' }],
    ['s3+list://ci-locks/locks', { kind: 's3+list', bucket: 'ci-locks', prefix: 'locks/' }],
    ['dynamodb://Locks_Table', { kind: 'dynamodb', table: 'Locks_Table' }],
    ['memory:', { kind: 'memory' }],
  ])('%s', (text, expected) => {
    expect(parseStoreUrl(text)).toEqual(expected);
  });

  test.each([
    ['redis://localhost', /unknown store scheme "redis:"/],
    ['s3://', /needs a bucket/],
    ['s3://Bad_Bucket', /not a valid S3 bucket name/],
    ['dynamodb://', /needs a table/],
    ['dynamodb://locks/extra', /takes no path/],
    ['dynamodb://x', /not a valid DynamoDB table name/],
    ['memory://x', /takes nothing after the colon/],
    ['memory:something', /not a store URL/],
    ['locks', /not a store URL/],
  ])('%s is refused', (text, message) => {
    expect(() => parseStoreUrl(text)).toThrow(message);
  });
});

describe('environment', () => {
  test('path-style S3 addressing follows an endpoint URL unless forced', () => {
    expect(s3PathStyle({})).toBe(false);
    expect(s3PathStyle({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9000' })).toBe(true);
    expect(s3PathStyle({ AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000' })).toBe(true);
    expect(s3PathStyle({ AWS_ENDPOINT_URL: 'http://minio:9000', AWS_S3_FORCE_PATH_STYLE: 'false' })).toBe(
      false,
    );
    expect(s3PathStyle({ AWS_S3_FORCE_PATH_STYLE: 'true' })).toBe(true);
    expect(() => s3PathStyle({ AWS_S3_FORCE_PATH_STYLE: 'yes' })).toThrow(UsageError);
  });

  test('GitHub Actions defaults', () => {
    expect(defaultLockName({})).toBeUndefined();
    expect(defaultLockName({ GITHUB_WORKFLOW: 'Deploy', GITHUB_JOB: 'prod' })).toBe('Deploy/prod');
    expect(defaultContext({})).toBeUndefined();
    expect(defaultContext({ GITHUB_WORKFLOW: 'Deploy', GITHUB_RUN_NUMBER: '12', GITHUB_JOB: 'prod' })).toBe(
      'Deploy run #12 job prod',
    );
    expect(defaultContext({ GITHUB_RUN_ID: '777' })).toBe('run 777');
  });
});

describe('main() in process', () => {
  function capture() {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      options: { out: (line: string) => out.push(line), err: (line: string) => err.push(line) },
    };
  }

  test('memory: lives in this process; status uses the GitHub name default', async () => {
    const io = capture();
    const env = { GITHUB_WORKFLOW: 'Nightly', GITHUB_JOB: 'build' };
    expect(await main(['status', '--store', 'memory:', '--json'], env, io.options)).toBe(0);
    expect(io.out).toEqual(['{"key":"Nightly/build","state":"free","fencingToken":0}']);
  });

  test('LATCH_STORE stands in for --store', async () => {
    const io = capture();
    expect(await main(['status', '--name', 'x'], { LATCH_STORE: 'memory:' }, io.options)).toBe(0);
    expect(io.out).toEqual(['lock "x": free']);
  });

  test('errors come back as an exit code and one line, never thrown', async () => {
    const io = capture();
    expect(
      await main(['acquire', '--store', 'memory:', '--name', 'x', '--lease', 'soon'], {}, io.options),
    ).toBe(2);
    expect(io.err).toEqual([
      'latch acquire: --lease must be a duration like 500ms, 90s, 15m, 1h or 1h30m, got "soon".',
    ]);
    expect(io.out).toEqual([]);
  });
});
