import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DynamoDBThrottler {
  /** Point DynamoDB clients here instead of at DynamoDB Local. */
  endpoint: string;
  /** Every request in the next `ms` is refused with a throughput error instead of being forwarded. */
  throttleFor(ms: number): void;
  /**
   * The next `times` writes (PutItem, UpdateItem, DeleteItem) of `key` by the client whose owner
   * id is `owner` are held for `ms` before they are forwarded: a slow network for one holder's
   * writes only. Reads, other keys and other clients' writes (waiters' claims) pass at once.
   * `hits` says how many writes it has held so far; `remove()` stops it holding more.
   */
  slowWrites(
    key: string,
    owner: string,
    ms: number,
    times: number,
  ): { readonly hits: number; remove(): void };
  /** Ends a throttling window early and drops pending slow-write rules (writes already held still go through). */
  clear(): void;
  /** Requests refused so far. */
  readonly throttled: number;
  close(): Promise<void>;
}

const WRITE_TARGETS = /\.(PutItem|UpdateItem|DeleteItem)$/;

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
 * It can also hold one lock's writes for a while (a slow network that only some requests meet,
 * which a TCP proxy cannot pick out).
 */
export async function startDynamoDBThrottler(target: string): Promise<DynamoDBThrottler> {
  const targetUrl = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let throttleUntil = 0;
  let throttled = 0;
  let slow: Array<{ needles: string[]; ms: number; remaining: number; hits: number }> = [];
  const held = new Set<NodeJS.Timeout>();

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
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = String(req.headers['x-amz-target'] ?? '');
      const rule = WRITE_TARGETS.test(target)
        ? slow.find((r) => r.remaining > 0 && r.needles.every((needle) => body.includes(needle)))
        : undefined;
      if (!rule) return forward(req, body, res);
      rule.remaining--;
      rule.hits++;
      const timer = setTimeout(() => {
        held.delete(timer);
        forward(req, body, res);
      }, rule.ms);
      held.add(timer);
    });
  });

  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse) => {
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
    upstream.end(body);
  };
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    throttleFor(ms) {
      throttleUntil = performance.now() + ms;
    },
    slowWrites(key, owner, ms, times) {
      // The key and the owner id as they appear in a request body: JSON string values.
      const rule = { needles: [JSON.stringify(key), JSON.stringify(owner)], ms, remaining: times, hits: 0 };
      slow.push(rule);
      return {
        get hits() {
          return rule.hits;
        },
        remove: () => {
          rule.remaining = 0;
        },
      };
    },
    clear() {
      throttleUntil = 0;
      slow = [];
    },
    get throttled() {
      return throttled;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of held) clearTimeout(timer);
        agent.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
