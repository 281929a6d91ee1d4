import { createServer } from 'node:net';

/**
 * Asks the OS for a port that is free right now on `host` by binding port 0 and releasing it.
 * Another process can still take it before we use it, so callers retry on "address in use".
 */
export async function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not pick a free port'))));
    });
  });
}
