import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import type { BackendEndpoints } from '../src/backend-endpoints.js';
import { type LatencyBackends, withLatency } from '../src/latency/latency-backends.js';

describe('latency profiles', () => {
  let server: Server | undefined;
  let delayed: LatencyBackends | undefined;
  afterEach(async () => {
    await delayed?.stop();
    if (server) await new Promise((resolve) => server!.close(resolve));
  });

  test('raw hands the endpoints back as they are', async () => {
    const endpoints: BackendEndpoints = { s3: { endpoint: 'http://127.0.0.1:1', bucket: 'b' } };
    delayed = await withLatency(endpoints, 'raw', 1);
    expect(delayed.endpoints).toEqual(endpoints);
  });

  test('aws puts a proxy in front of S3 and DynamoDB, leaves redis alone, and requests get through', async () => {
    const paths: string[] = [];
    server = createServer((req, res) => {
      paths.push(`${req.method} ${req.url}`);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
    const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tables = { latch: 'a', dynamodbLockClient: 'b', deliveryhero: 'c' };
    const endpoints: BackendEndpoints = {
      s3: { endpoint: target, bucket: 'locks' },
      dynamodb: { endpoint: target, tables },
      redis: { url: 'redis://127.0.0.1:6379' },
    };
    delayed = await withLatency(endpoints, 'aws', 1);
    const out = delayed.endpoints;
    expect(out.s3?.bucket).toBe('locks');
    expect(out.s3?.endpoint).not.toBe(target);
    expect(out.dynamodb?.tables).toEqual(tables);
    expect(out.dynamodb?.endpoint).not.toBe(target);
    expect(out.dynamodb?.endpoint).not.toBe(out.s3?.endpoint);
    expect(out.redis).toEqual(endpoints.redis);

    const get = (endpoint: string, path: string) =>
      new Promise<string>((resolve, reject) => {
        request(`${endpoint}${path}`, (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve(body));
        })
          .on('error', reject)
          .end();
      });
    expect(await get(out.s3!.endpoint, '/locks/k')).toBe('ok');
    expect(await get(out.dynamodb!.endpoint, '/')).toBe('ok');
    expect(paths).toEqual(['GET /locks/k', 'GET /']);
  });
});
