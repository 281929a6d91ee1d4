import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DelayProxyOptions {
  /** Where requests go: "http://127.0.0.1:4567". */
  target: string;
  /** How long to hold this request back, in ms; called once per request, when its headers arrive. */
  delayFor: (req: IncomingMessage) => number;
}

export interface DelayProxy {
  /** The proxy's own address, to use in place of the target's. */
  endpoint: string;
  /** Requests forwarded so far. */
  readonly forwarded: number;
  stop(): Promise<void>;
}

/**
 * A forwarding HTTP proxy on 127.0.0.1 that holds each request back once, by the delay
 * `delayFor` gives it, then passes method, path, headers (Host included, so signatures still
 * match) and body to the target unchanged, and the response back unchanged. The delay is per
 * request, not per chunk: the body waits in the socket's buffer meanwhile.
 */
export async function startDelayProxy(options: DelayProxyOptions): Promise<DelayProxy> {
  const target = new URL(options.target);
  const agent = new Agent({ keepAlive: true });
  let forwarded = 0;

  function forward(req: IncomingMessage, res: ServerResponse): void {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (response) => {
        res.writeHead(response.statusCode ?? 502, response.statusMessage, response.headers);
        response.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (res.headersSent) res.destroy(error);
      else res.writeHead(502, { 'content-type': 'text/plain' }).end(`delay proxy: ${error.message}`);
    });
    forwarded++;
    req.pipe(upstream);
  }

  const server = createServer((req, res) => {
    const delayMs = Math.max(0, options.delayFor(req));
    setTimeout(() => forward(req, res), delayMs);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get forwarded() {
      return forwarded;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
