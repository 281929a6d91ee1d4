import type { Server } from 'node:http';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Anything with Express's `listen` (Express 4 and 5 apps). */
interface Listenable {
  listen(port: number, host: string): Server;
}

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1; `close()` also drops kept-alive connections. */
export async function serve(app: Listenable): Promise<Served> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * GET with the path sent exactly as given. `fetch` normalises URLs, turning `/a/..` (and
 * `/a/%2E%2E`) into `/`, so it cannot send some of the values key-injection tests need.
 */
export function getRaw(baseUrl: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl);
    const request = get({ hostname, port, path }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
  });
}
