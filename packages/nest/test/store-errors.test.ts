import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { LockClient, s3Store } from '@latch/core';
import { type S3Server, startS3Server } from '@latch/testing';
import { Controller, Get, type INestApplication, Param } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { Locked, LockModule } from '../src/index.js';
import { CapturingLogger } from './helpers/capturing-logger.js';

// Credentials in the shape of real ones, so that a leak would be visible.
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const ALLOWED_KEY = 'AKIAALLOWEDEXAMPLE01';
const DENIED_KEY = 'AKIADENIEDEXAMPLE001';
const UNKNOWN_KEY = 'AKIAUNKNOWNEXAMPLE01';

@Controller('items')
class ItemController {
  @Locked('item:{0}', { onLocked: 'throw' })
  @Get(':id')
  get(@Param('id') id: string): { id: string } {
    return { id };
  }

  @Locked('item:{0}', { onLocked: 'wait', waitMs: 60_000 })
  @Get(':id/patiently')
  getPatiently(@Param('id') id: string): { id: string } {
    return { id };
  }

  @Locked('item:{0}', { onLocked: 'wait', waitMs: 1_500, failFastOnStoreError: false })
  @Get(':id/through-outages')
  getThroughOutages(@Param('id') id: string): { id: string } {
    return { id };
  }
}

// Nothing listens on port 1: connections to it are refused.
const REFUSED_ENDPOINT = 'http://127.0.0.1:1';

let s3: S3Server;
const sdks: S3Client[] = [];
const apps: INestApplication[] = [];

beforeAll(async () => {
  // Like S3 with IAM: DENIED_KEY is refused (AccessDenied), UNKNOWN_KEY unknown (InvalidAccessKeyId).
  s3 = await startS3Server({ bucket: 'locks', accessKeys: { [ALLOWED_KEY]: 'allow', [DENIED_KEY]: 'deny' } });
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  for (const sdk of sdks.splice(0)) sdk.destroy();
  vi.unstubAllEnvs();
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

/** A real Nest application (Express platform) whose logs are captured. */
async function startApp(client: LockClient, logger: CapturingLogger): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [LockModule.forRoot({ client })],
    controllers: [ItemController],
  }).compile();
  const app = moduleRef.createNestApplication({ logger });
  apps.push(app);
  await app.init();
  return app;
}

interface Scenario {
  name: string;
  locks: () => LockClient;
  status: number;
  type: string;
  detail: string;
  level: 'error' | 'warn';
  /** The log line after `GET /items/a answered <status>: `. */
  logged: RegExp;
}

const MISCONFIGURED = {
  status: 500,
  type: 'urn:latch:problem:lock-store-misconfigured',
  detail: "The lock store is misconfigured. The server's operator should check the server log.",
  level: 'error',
} as const;

const scenarios: Scenario[] = [
  {
    name: 'a missing bucket',
    locks: () => locksOn(s3.clientConfig(), 'no-such-bucket'),
    ...MISCONFIGURED,
    logged:
      /^lock store misconfigured \(reason misconfigured, code LOCK_STORE_NOT_FOUND\): S3 \w+ for lock "item:a" failed: S3 bucket "no-such-bucket" does not exist/,
  },
  {
    name: 'no credentials at all',
    locks: () => {
      withoutAnyCredentials();
      return locksOn({ endpoint: s3.endpoint });
    },
    ...MISCONFIGURED,
    logged:
      /^lock store access denied \(reason denied, code LOCK_STORE_ACCESS_DENIED\): S3 \w+ for lock "item:a" was not sent: the client found no credentials \(CredentialsProviderError: Could not load credentials from any providers\)/,
  },
  {
    name: 'credentials IAM denies',
    locks: () => locksOn({ endpoint: s3.endpoint, credentials: credentials(DENIED_KEY) }),
    ...MISCONFIGURED,
    logged:
      /^lock store access denied \(reason denied, code LOCK_STORE_ACCESS_DENIED\): S3 \w+ for lock "item:a" failed: access denied to S3 bucket "locks"\. Grant s3:\w+/,
  },
  {
    name: 'an access key S3 does not know',
    locks: () => locksOn({ endpoint: s3.endpoint, credentials: credentials(UNKNOWN_KEY) }),
    ...MISCONFIGURED,
    logged:
      /^lock store access denied \(reason denied, code LOCK_STORE_ACCESS_DENIED\): S3 \w+ for lock "item:a" failed: the client's credentials were rejected \(InvalidAccessKeyId: /,
  },
  {
    name: 'an endpoint nothing listens on',
    locks: () => locksOn({ endpoint: REFUSED_ENDPOINT, credentials: credentials(ALLOWED_KEY) }),
    status: 503,
    type: 'urn:latch:problem:lock-store-unavailable',
    detail: 'The lock store could not be reached. Retry later.',
    level: 'warn',
    logged:
      /^lock store unavailable \(reason unavailable, code LOCK_STORE_NETWORK\): S3 \w+ for lock "item:a" could not connect to S3\. \(Error: connect ECONNREFUSED 127\.0\.0\.1:\d+\)/,
  },
];

describe.each(scenarios)('with $name', (scenario) => {
  test(`answers ${scenario.status} and logs one ${scenario.level} line through Nest's Logger, without secrets`, async () => {
    const logger = new CapturingLogger();
    const app = await startApp(scenario.locks(), logger);

    const response = await request(app.getHttpServer()).get('/items/a?token=from-the-query');

    expect(response.status).toBe(scenario.status);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['retry-after']).toBe(scenario.status === 503 ? '1' : undefined);
    expect(response.body).toEqual({
      type: scenario.type,
      title: scenario.status === 503 ? 'Service Unavailable' : 'Internal Server Error',
      status: scenario.status,
      detail: scenario.detail,
    });

    const logged = logger.latch();
    expect(logged).toHaveLength(1);
    expect(logged[0]?.level).toBe(scenario.level);
    const line = logged[0]?.message ?? '';
    const prefix = `GET /items/a answered ${scenario.status}: `;
    expect(line.startsWith(prefix), line).toBe(true);
    expect(line.slice(prefix.length)).toMatch(scenario.logged);
    const everything = JSON.stringify(logger.entries) + response.text;
    for (const secret of [SECRET, ALLOWED_KEY, DENIED_KEY, UNKNOWN_KEY, 'from-the-query']) {
      expect(everything).not.toContain(secret);
    }
    expect(response.text).not.toContain('bucket');
    expect(response.text).not.toContain('ECONNREFUSED');
  });
});

test('the credentials S3 refuses are the cause: allowed ones reach the same S3, and nothing is logged', async () => {
  const logger = new CapturingLogger();
  const app = await startApp(
    locksOn({ endpoint: s3.endpoint, credentials: credentials(ALLOWED_KEY) }),
    logger,
  );
  const response = await request(app.getHttpServer()).get('/items/a');
  expect(response.status).toBe(200);
  expect(response.body).toEqual({ id: 'a' });
  expect(logger.latch()).toEqual([]);
});

test("a store set up wrong fails at once under onLocked: 'wait' too: nothing to wait for", async () => {
  const logger = new CapturingLogger();
  const app = await startApp(locksOn(s3.clientConfig(), 'no-such-bucket'), logger);
  // The route waits up to 60 s, longer than this test may take: only failing fast answers.
  const response = await request(app.getHttpServer()).get('/items/a/patiently');
  expect(response.status).toBe(500);
  expect(response.body).toMatchObject({ type: 'urn:latch:problem:lock-store-misconfigured' });
  expect(logger.latch()).toEqual([
    {
      level: 'error',
      message: expect.stringMatching(/^GET \/items\/a\/patiently answered 500: lock store misconfigured/),
    },
  ]);
});

test("a store that cannot be reached answers 503 at once under onLocked: 'wait', not 423 after the wait", async () => {
  const logger = new CapturingLogger();
  const app = await startApp(
    locksOn({ endpoint: REFUSED_ENDPOINT, credentials: credentials(ALLOWED_KEY) }),
    logger,
  );
  // The route waits up to 60 s, longer than this test may take: only failing fast answers.
  const response = await request(app.getHttpServer()).get('/items/a/patiently');
  expect(response.status).toBe(503);
  expect(response.body).toMatchObject({ type: 'urn:latch:problem:lock-store-unavailable' });
  expect(logger.latch()).toEqual([
    {
      level: 'warn',
      message: expect.stringMatching(/^GET \/items\/a\/patiently answered 503: lock store unavailable/),
    },
  ]);
});

test('failFastOnStoreError: false retries an outage for the whole wait, then answers 423 as for a held lock', async () => {
  const logger = new CapturingLogger();
  const app = await startApp(
    locksOn({ endpoint: REFUSED_ENDPOINT, credentials: credentials(ALLOWED_KEY) }),
    logger,
  );
  const response = await request(app.getHttpServer()).get('/items/a/through-outages');
  expect(response.status).toBe(423);
  expect(logger.latch()).toEqual([]);
});
