import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { freeRecord } from '@latch/testing/conformance';
import { afterAll, describe, expect, it } from 'vitest';
import { dynamoStore, LockClient, type LockStore, LockStoreError, s3Store } from '../../src/index.js';

// Real SDK clients against endpoints where nothing can be applied (a closed port, a name that
// does not resolve, a certificate the client rejects) and against one where the outcome stays
// unknown (a server that takes the request and never answers). The SDK retries connection
// failures on its own, so these also check that its retries do not turn "never sent" into
// "may have been applied".

const credentials = { accessKeyId: 'x', secretAccessKey: 'y' };
const sdks: { destroy(): void }[] = [];
const servers: Server[] = [];
const sockets: Socket[] = [];

afterAll(async () => {
  for (const sdk of sdks) sdk.destroy();
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
});

type Backend = 's3' | 'dynamodb';
const OPERATION = { s3: 'S3 PutObject', dynamodb: 'DynamoDB UpdateItem' } as const;
const SERVICE = { s3: 'S3', dynamodb: 'DynamoDB' } as const;

function storeAt(backend: Backend, endpoint: string, config: Record<string, unknown> = {}): LockStore {
  if (backend === 's3') {
    const sdk = new S3Client({ endpoint, region: 'us-east-1', credentials, forcePathStyle: true, ...config });
    sdks.push(sdk);
    // verify: false — these are the lock's own requests and their README lines, not the check on first use.
    return s3Store({ client: sdk, bucket: 'locks', verify: false });
  }
  const sdk = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials, ...config });
  sdks.push(sdk);
  return dynamoStore({ client: sdk, table: 'locks', verify: false });
}

/** A port nothing listens on: bound once by us, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** A server that accepts connections and never answers; `onConnection` sees each one. */
async function silentServer(onConnection: (server: Server) => void = () => {}): Promise<number> {
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.resume();
    onConnection(server);
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as { port: number }).port;
}

async function acquireError(store: LockStore): Promise<LockStoreError> {
  const locks = new LockClient({ store });
  try {
    const error = await locks.tryAcquire('invoice/inv-7').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LockStoreError);
    return error as LockStoreError;
  } finally {
    await locks.close();
  }
}

describe.each<Backend>(['s3', 'dynamodb'])(
  '%s: a request that never left is not maybe-applied',
  (backend) => {
    it('reports a refused connection, after the SDK retried it, as not applied', async () => {
      const port = await closedPort();
      const error = await acquireError(storeAt(backend, `http://127.0.0.1:${port}`));
      expect(error.maybeApplied).toBe(false);
      expect(error.code).toBe('LOCK_STORE_NETWORK');
      expect(error.reason).toBe('unavailable');
      // The line the READMEs show for a refused connection.
      expect(error.message).toBe(
        `${OPERATION[backend]} for lock "invoice/inv-7" could not connect to ${SERVICE[backend]}. (Error: connect ECONNREFUSED 127.0.0.1:${port})`,
      );
      expect((error.cause as { $metadata?: { attempts?: number } }).$metadata?.attempts).toBeGreaterThan(1);
    });

    it('reports a host name that does not resolve as not applied', async () => {
      const error = await acquireError(storeAt(backend, 'http://nonexistent.invalid'));
      expect(error.maybeApplied).toBe(false);
      expect(error.code).toBe('LOCK_STORE_NETWORK');
      expect(error.message).toBe(
        `${OPERATION[backend]} for lock "invoice/inv-7" could not connect to ${SERVICE[backend]}. (Error: getaddrinfo ENOTFOUND nonexistent.invalid)`,
      );
      expect((error.cause as { $metadata?: { attempts?: number } }).$metadata?.attempts).toBeGreaterThan(1);
    });

    it('reports a server certificate the client rejects as not applied, and nothing reached the server', async () => {
      let requests = 0;
      const server = createHttpsServer(
        {
          key: readFileSync(new URL('../fixtures/self-signed-key.pem', import.meta.url)),
          cert: readFileSync(new URL('../fixtures/self-signed-cert.pem', import.meta.url)),
        },
        (_, res) => {
          requests++;
          res.statusCode = 500;
          res.end();
        },
      );
      servers.push(server);
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      const { port } = server.address() as { port: number };
      const error = await acquireError(storeAt(backend, `https://localhost:${port}`));
      expect(requests).toBe(0);
      expect(error.maybeApplied).toBe(false);
      expect(error.code).toBe('LOCK_STORE_NETWORK');
      expect(error.message).toMatch(
        new RegExp(
          `^${OPERATION[backend]} for lock "invoice/inv-7" could not connect to ${SERVICE[backend]}\\. \\(Error: self[- ]signed certificate[^)]*\\)$`, // newer Node lines add a hint
        ),
      );
    });

    it('keeps a write whose request was sent and never answered maybe-applied', async () => {
      const port = await silentServer();
      const store = storeAt(backend, `http://127.0.0.1:${port}`, {
        maxAttempts: 1,
        requestHandler: { requestTimeout: 150, throwOnRequestTimeout: true },
      });
      const error = await store.write('invoice/inv-7', freeRecord(1), { absent: true }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LockStoreError);
      expect(error).toMatchObject({ maybeApplied: true, code: 'LOCK_STORE_NETWORK' });
    });

    it('keeps a write maybe-applied when an earlier attempt was sent, though the last was refused', async () => {
      // The first attempt reaches the server, which stops listening and never answers it; the
      // SDK's next attempts are refused. The first one may still be applied.
      const port = await silentServer((server) => server.close());
      const store = storeAt(backend, `http://127.0.0.1:${port}`, {
        maxAttempts: 3,
        requestHandler: { requestTimeout: 150, throwOnRequestTimeout: true },
      });
      const error = await store.write('invoice/inv-7', freeRecord(1), { absent: true }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LockStoreError);
      const cause = (error as LockStoreError).cause as { code?: string; $metadata?: { attempts?: number } };
      expect(cause.code).toBe('ECONNREFUSED');
      expect(cause.$metadata?.attempts).toBe(3);
      expect(error).toMatchObject({ maybeApplied: true, code: 'LOCK_STORE_NETWORK' });
      expect((error as LockStoreError).message).toContain('the write may have been applied');
    });
  },
);
