import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DynamoDBThrottler {
  /** Point DynamoDB clients here instead of at DynamoDB Local. */
  endpoint: string;
  /** Every request in the next `ms` is refused with a throughput error instead of being forwarded. */
  throttleFor(ms: number): void;
  /** Ends a throttling window early. */
  clear(): void;
  /** Requests refused so far. */
  readonly throttled: number;
  close(): Promise<void>;
}

// The error bodies DynamoDB sends when a table or the account is over its throughput.
const THROTTLE_ERRORS = [
  {
    __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
    message: 'The level of configured provisioned throughput for the table was exceeded.',
  },
  {
    __type: 'com.amazon.coral.availability#ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput.',
  },
];

/**
 * DynamoDB Local never throttles, so this HTTP front answers bursts of requests the way DynamoDB
 * does when it throttles (HTTP 400 with a throughput error body), and forwards everything else to
 * DynamoDB Local unchanged. The SDK's own error parsing and retries see a real throttling answer.
 */
export async function startDynamoDBThrottler(target: string): Promise<DynamoDBThrottler> {
  const targetUrl = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let throttleUntil = 0;
  let throttled = 0;

  const server = createServer((req, res) => {
    if (performance.now() < throttleUntil) {
      const error = THROTTLE_ERRORS[throttled++ % THROTTLE_ERRORS.length]!;
      req.resume();
      req.on('end', () => {
        res.writeHead(400, {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-requestid': `throttled-${throttled}`,
        });
        res.end(JSON.stringify(error));
      });
      return;
    }
    const upstream = request(
      {
        agent,
        host: targetUrl.hostname,
        port: targetUrl.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    throttleFor(ms) {
      throttleUntil = performance.now() + ms;
    },
    clear() {
      throttleUntil = 0;
    },
    get throttled() {
      return throttled;
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
