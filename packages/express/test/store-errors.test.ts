import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { LockClient, LockConfigError, LockStoreError, type LockStoreErrorReason, s3Store } from '@latch/core';
import { type S3Server, startS3Server } from '@latch/testing';
import express, { type Request } from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { type LockErrorHandlerOptions, lock, lockErrorHandler } from '../src/index.js';
import { type Served, serve } from './helpers/serve.js';

// Credentials in the shape of real ones, so that a leak would be visible.
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const ALLOWED_KEY = 'AKIAALLOWEDEXAMPLE01';
const DENIED_KEY = 'AKIADENIEDEXAMPLE001';
const UNKNOWN_KEY = 'AKIAUNKNOWNEXAMPLE01';

// Nothing listens on port 1: connections to it are refused.
const REFUSED_ENDPOINT = 'http://127.0.0.1:1';

let s3: S3Server;
const sdks: S3Client[] = [];
const served: Served[] = [];

beforeAll(async () => {
  // Like S3 with IAM: DENIED_KEY is refused (AccessDenied), UNKNOWN_KEY unknown (InvalidAccessKeyId).
  s3 = await startS3Server({ bucket: 'locks', accessKeys: { [ALLOWED_KEY]: 'allow', [DENIED_KEY]: 'deny' } });
});
afterEach(async () => {
  await Promise.all(served.splice(0).map((s) => s.close()));
  for (const sdk of sdks.splice(0)) sdk.destroy();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  vi.useRealTimers();
});
afterAll(async () => {
  await s3?.stop();
});

/** A lock client on S3 as configured; one SDK attempt and one core retry keep failures quick. */
function locksOn(config: S3ClientConfig, bucket = 'locks'): LockClient {
  const sdk = new S3Client({ region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, ...config });
  sdks.push(sdk);
  return new LockClient({
    store: s3Store({ client: sdk, bucket, prefix: 'locks/' }),
    retry: { attempts: 2, baseMs: 10, maxMs: 20 },
  });
}

const credentials = (accessKeyId: string) => ({ accessKeyId, secretAccessKey: SECRET });

/** No credentials anywhere the SDK's default chain looks, and no instance metadata service. */
function withoutAnyCredentials(): void {
  for (const name of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_WEB_IDENTITY_TOKEN_FILE',
    'AWS_ROLE_ARN',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  ]) {
    vi.stubEnv(name, undefined);
  }
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', '/nonexistent/latch-test/credentials');
  vi.stubEnv('AWS_CONFIG_FILE', '/nonexistent/latch-test/config');
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
}

interface Scenario {
  name: string;
  locks: () => LockClient;
  status: number;
  type: string;
  detail: string;
  reason: LockStoreErrorReason;
  /** The default log line after `[latch] GET /items/a answered <status>: `. */
  logged: RegExp;
}

const MISCONFIGURED = {
  status: 500,
  type: 'urn:latch:problem:lock-store-misconfigured',
  detail: "The lock store is misconfigured. The server's operator should check the server log.",
};

const scenarios: Scenario[] = [
  {
    name: 'a missing bucket',
    locks: () => locksOn(s3.clientConfig(), 'no-such-bucket'),
    ...MISCONFIGURED,
    reason: 'misconfigured',
    logged:
      /^lock store misconfigured \(reason misconfigured, code LOCK_STORE_NOT_FOUND\): S3 \w+ for lock "item\/a" failed: S3 bucket "no-such-bucket" does not exist/,
  },
  {
    name: 'no credentials at all',
    locks: () => {
      withoutAnyCredentials();
      return locksOn({ endpoint: s3.endpoint });
    },
    ...MISCONFIGURED,
    reason: 'denied',
    logged:
      /^lock store access denied \(reason denied, code LOCK_STORE_ACCESS_DENIED\): S3 \w+ for lock "item\/a" was not sent: the client found no credentials \(CredentialsProviderError: Could not load credentials from any providers\)/,
  },
  {
    name: 'credentials IAM denies',
    locks: () => locksOn({ endpoint: s3.endpoint, credentials: credentials(DENIED_KEY) }),
    ...MISCONFIGURED,
    reason: 'denied',
    logged:
      /^lock store access denied \(reason denied, code LOCK_STORE_ACCESS_DENIED\): S3 \w+ for lock "item\/a" failed: access denied to S3 bucket "locks"\. Grant s3:\w+/,
  },
  {
    name: 'an access key S3 does not know',
    locks: () => locksOn({ endpoint: s3.endpoint, credentials: credentials(UNKNOWN_KEY) }),
    ...MISCONFIGURED,
    reason: 'denied',
    logged:
      /^lock store access denied \(reason denied, code LOCK_STORE_ACCESS_DENIED\): S3 \w+ for lock "item\/a" failed: the client's credentials were rejected \(InvalidAccessKeyId: /,
  },
  {
    name: 'an endpoint nothing listens on',
    locks: () => locksOn({ endpoint: REFUSED_ENDPOINT, credentials: credentials(ALLOWED_KEY) }),
    status: 503,
    type: 'urn:latch:problem:lock-store-unavailable',
    detail: 'The lock store could not be reached. Retry later.',
    reason: 'unavailable',
    logged:
      /^lock store unavailable \(reason unavailable, code LOCK_STORE_NETWORK\): S3 \w+ for lock "item\/a" could not connect to S3\. \(Error: connect ECONNREFUSED 127\.0\.0\.1:\d+\)/,
  },
];

/** An app whose `GET /items/:id` is guarded by `locks`, with `lockErrorHandler(options)`. */
async function serveGuarded(locks: LockClient, options?: LockErrorHandlerOptions): Promise<string> {
  const app = express();
  app.get('/items/:id', lock({ client: locks, name: 'item', key: (req) => req.params.id }), (_req, res) => {
    res.json({ ran: true });
  });
  app.use(lockErrorHandler(options));
  const server = await serve(app);
  served.push(server);
  return server.url;
}

describe.each(scenarios)('with $name', (scenario) => {
  test(`answers ${scenario.status} (reason ${scenario.reason}) and calls onStoreError once`, async () => {
    const seen: Array<{ error: unknown; path: string }> = [];
    const url = await serveGuarded(scenario.locks(), {
      onStoreError: (error, req: Request) => seen.push({ error, path: req.path }),
    });

    const response = await fetch(`${url}/items/a`);
    const body = await response.json();

    expect(response.status).toBe(scenario.status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.headers.get('retry-after')).toBe(scenario.status === 503 ? '1' : null);
    expect(body).toEqual({
      type: scenario.type,
      title: scenario.status === 503 ? 'Service Unavailable' : 'Internal Server Error',
      status: scenario.status,
      detail: scenario.detail,
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.path).toBe('/items/a');
    expect(seen[0]?.error).toBeInstanceOf(LockStoreError);
    expect(seen[0]?.error).toMatchObject({ reason: scenario.reason });
  });

  test('by default logs one line to console.error: request, status, reason and cause, no secrets', async () => {
    const errorLog = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const url = await serveGuarded(scenario.locks());

    const response = await fetch(`${url}/items/a?token=from-the-query`);
    const body = await response.text();

    expect(response.status).toBe(scenario.status);
    expect(errorLog).toHaveBeenCalledTimes(1);
    const line = String(errorLog.mock.calls[0]?.[0]);
    expect(errorLog.mock.calls[0]).toHaveLength(1);
    expect(line).not.toContain('\n');
    const prefix = `[latch] GET /items/a answered ${scenario.status}: `;
    expect(line.startsWith(prefix), line).toBe(true);
    expect(line.slice(prefix.length)).toMatch(scenario.logged);
    for (const text of [line, body]) {
      for (const secret of [SECRET, ALLOWED_KEY, DENIED_KEY, UNKNOWN_KEY, 'from-the-query']) {
        expect(text).not.toContain(secret);
      }
    }
    // The client learns the kind of failure, never the bucket or what the store said.
    expect(body).not.toContain('bucket');
    expect(body).not.toContain('ECONNREFUSED');
  });
});

test('the credentials S3 refuses are the cause: allowed ones reach the same S3', async () => {
  const url = await serveGuarded(locksOn({ endpoint: s3.endpoint, credentials: credentials(ALLOWED_KEY) }));
  const response = await fetch(`${url}/items/a`);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ ran: true });
});

test('the default log says a repeated cause once per 10 s, then how many it left out', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
  const errorLog = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  const app = express();
  const missing = locksOn(s3.clientConfig(), 'no-such-bucket');
  const refused = locksOn({ endpoint: REFUSED_ENDPOINT, credentials: credentials(ALLOWED_KEY) });
  app.get('/missing/:id', lock({ client: missing, name: 'item', key: (req) => req.params.id }), (_q, r) => {
    r.end();
  });
  app.get('/refused/:id', lock({ client: refused, name: 'item', key: (req) => req.params.id }), (_q, r) => {
    r.end();
  });
  app.use(lockErrorHandler());
  const server = await serve(app);
  served.push(server);

  for (const id of ['a', 'b', 'c']) expect((await fetch(`${server.url}/missing/${id}`)).status).toBe(500);
  expect((await fetch(`${server.url}/refused/a`)).status).toBe(503);
  const lines = () => errorLog.mock.calls.map((call) => String(call[0]));
  expect(lines()).toHaveLength(2);
  expect(lines()[0]).toMatch(/^\[latch\] GET \/missing\/a answered 500: lock store misconfigured/);
  expect(lines()[1]).toMatch(/^\[latch\] GET \/refused\/a answered 503: lock store unavailable/);

  vi.setSystemTime(Date.now() + 10_001);
  expect((await fetch(`${server.url}/missing/d`)).status).toBe(500);
  expect(lines()).toHaveLength(3);
  expect(lines()[2]).toMatch(
    /^\[latch\] GET \/missing\/d answered 500: lock store misconfigured .* \(2 more like it not logged since the last report\)$/,
  );
});

test('the default log takes failures of many keys with one root cause for one cause', async () => {
  const errorLog = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  const app = express();
  // What a brownout looks like: writes of unknown outcome, each message naming its own key.
  app.get('/write/:id', (req) => {
    const key = `item:${req.params.id}`;
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const storeError = new LockStoreError(`S3 PutObject for lock "${key}" lost its connection`, {
      cause: reset,
      retryable: true,
      maybeApplied: true,
      reason: 'unavailable',
    });
    throw new LockStoreError(`a write to lock "${key}" has an unknown outcome`, {
      cause: storeError,
      retryable: true,
      maybeApplied: true,
      reason: 'unavailable',
    });
  });
  app.use(lockErrorHandler());
  const server = await serve(app);
  served.push(server);
  for (const id of ['a', 'b', 'c']) expect((await fetch(`${server.url}/write/${id}`)).status).toBe(503);
  expect(errorLog.mock.calls.map((call) => String(call[0]))).toEqual([
    expect.stringMatching(/^\[latch\] GET \/write\/a answered 503: lock store unavailable/),
  ]);
});

test('lockErrorHandler checks its options when it is created', () => {
  expect(() => lockErrorHandler({ onStoreEror: () => undefined } as never)).toThrow(LockConfigError);
  expect(() => lockErrorHandler({ onStoreEror: () => undefined } as never)).toThrow(
    /unknown option onStoreEror; did you mean onStoreError\?/,
  );
  expect(() => lockErrorHandler({ onStoreError: 'log' } as never)).toThrow(/must be a function/);
  expect(() => lockErrorHandler(null as never)).toThrow(LockConfigError);
  expect(() => lockErrorHandler({})).not.toThrow();
});
