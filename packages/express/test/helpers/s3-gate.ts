import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface S3Gate {
  /** Point the S3 client here instead of at the S3 server. */
  readonly endpoint: string;
  close(): Promise<void>;
}

/**
 * An IAM check in front of a real (local) S3 server, which accepts any credentials: requests
 * signed with an access key marked 'allow' are forwarded; 'deny' gets S3's 403 AccessDenied;
 * any other key S3's 403 InvalidAccessKeyId. The error bodies carry what S3's carry (the access
 * key id, the signature), so tests can check that none of it reaches an answer or a log.
 */
export async function startS3Gate(target: string, keys: Record<string, 'allow' | 'deny'>): Promise<S3Gate> {
  const { hostname, port } = new URL(target);
  const server = createServer((req, res) => {
    const authorization = req.headers.authorization ?? '';
    const accessKeyId = /Credential=([^/]+)\//.exec(authorization)?.[1] ?? '';
    const signature = /Signature=([0-9a-f]+)/.exec(authorization)?.[1] ?? '';
    const verdict = keys[accessKeyId];
    if (verdict === 'allow') {
      const forward = request(
        { hostname, port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
      return;
    }
    const [code, message] =
      verdict === 'deny'
        ? ['AccessDenied', 'Access Denied']
        : ['InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
    req.resume();
    req.on('end', () => {
      res.writeHead(403, { 'Content-Type': 'application/xml' });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>` +
          `<AWSAccessKeyId>${accessKeyId}</AWSAccessKeyId><SignatureProvided>${signature}</SignatureProvided>` +
          '<RequestId>4442587FB7D0A2F9</RequestId><HostId>gate</HostId></Error>',
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: connections to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
