import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { type DelayProxy, startDelayProxy } from '../src/latency/delay-proxy.js';

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A tiny server that records what reached it and answers with a fixed status, headers and body. */
async function startEcho(): Promise<{ server: Server; endpoint: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(412, { etag: '"abc"', 'x-answer': 'yes', 'content-type': 'application/xml' });
      res.end('<Error>PreconditionFailed</Error>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function send(
  endpoint: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  chunks: string[],
): Promise<{ status?: number; headers: IncomingHttpHeaders; body: string }> {
  const url = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const body: Buffer[] = [];
      res.on('data', (chunk: Buffer) => body.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(body).toString() }),
      );
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('delay proxy', () => {
  let echo: Awaited<ReturnType<typeof startEcho>> | undefined;
  let proxy: DelayProxy | undefined;
  afterEach(async () => {
    await proxy?.stop();
    proxy = undefined;
    if (echo) await new Promise((resolve) => echo!.server.close(resolve));
    echo = undefined;
  });

  test('forwards method, path, headers and a chunked body unchanged, and the response back', async () => {
    echo = await startEcho();
    const delays: string[] = [];
    proxy = await startDelayProxy({
      target: echo.endpoint,
      delayFor: (req) => {
        delays.push(`${req.method} ${req.url}`);
        return 3;
      },
    });
    const headers = {
      'if-match': '"etag-1"',
      'x-amz-target': 'DynamoDB_20120810.PutItem',
      authorization: 'AWS4-HMAC-SHA256 Credential=bench/x, Signature=00',
      'content-type': 'application/json',
    };
    const chunks = ['{"owner":', '"p0c1",', '"token":7}'];
    const response = await send(proxy.endpoint, 'PUT', '/bucket/a%2Fb?x-id=PutObject', headers, chunks);

    expect(response.status).toBe(412);
    expect(response.headers.etag).toBe('"abc"');
    expect(response.headers['x-answer']).toBe('yes');
    expect(response.body).toBe('<Error>PreconditionFailed</Error>');

    expect(echo.seen).toHaveLength(1);
    const got = echo.seen[0]!;
    expect(got.method).toBe('PUT');
    expect(got.url).toBe('/bucket/a%2Fb?x-id=PutObject');
    expect(got.body).toBe(chunks.join(''));
    expect(got.headers).toMatchObject(headers);
    // The Host header the client signed is kept: the proxy's own address.
    expect(got.headers.host).toBe(new URL(proxy.endpoint).host);
    // Delayed once per request, however many chunks its body came in.
    expect(delays).toEqual(['PUT /bucket/a%2Fb?x-id=PutObject']);
    expect(proxy.forwarded).toBe(1);
  });

  test('asks for one delay per request on a kept-alive connection', async () => {
    echo = await startEcho();
    let asked = 0;
    proxy = await startDelayProxy({
      target: echo.endpoint,
      delayFor: () => {
        asked++;
        return 0;
      },
    });
    for (let i = 0; i < 3; i++) await send(proxy.endpoint, 'GET', `/k/${i}`, {}, []);
    expect(asked).toBe(3);
    expect(echo.seen.map((s) => s.url)).toEqual(['/k/0', '/k/1', '/k/2']);
  });

  test('answers 502 when the target is gone', async () => {
    echo = await startEcho();
    const target = echo.endpoint;
    await new Promise((resolve) => echo!.server.close(resolve));
    echo = undefined;
    proxy = await startDelayProxy({ target, delayFor: () => 0 });
    const response = await send(proxy.endpoint, 'GET', '/x', {}, []);
    expect(response.status).toBe(502);
    expect(response.body).toContain('delay proxy');
  });
});
