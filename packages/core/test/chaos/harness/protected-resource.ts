import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** One write a worker sent to the protected resource, as the resource saw it. */
export interface ResourceWrite {
  /** Arrival order: the resource handles one write at a time, so this is a total order. */
  seq: number;
  /** Arrival time on the test process's monotonic clock (ms): one clock for every worker. */
  at: number;
  /**
   * `begin` opens a critical section, `step` is a write in its middle, `commit` is the write that
   * completes its unit of work.
   */
  kind: WriteKind;
  key: string;
  token: number;
  process: string;
  worker: string;
  unit: string;
  /**
   * When the writer last checked that it still held its lock (`isHeld` and a live signal), just
   * before sending this write: wall-clock ms (fractional), one clock for every process on the
   * machine. Absent for a write sent without that check (a frozen holder's write that was already
   * on the wire).
   */
  checkedAt?: number;
  /** The writer's lock at the time of the write: when its acquisition began and when its lease ends, as stored (wall-clock ms). */
  acquiredAt?: number;
  expiresAt?: number | null;
  accepted: boolean;
}

export type WriteKind = 'begin' | 'step' | 'commit';
const KINDS: readonly string[] = ['begin', 'step', 'commit'] satisfies WriteKind[];

export interface ProtectedResourceOptions {
  /**
   * Called for every write before it is answered: the kill scenario kills the writer here, and
   * `{ freeze: true }` tells the writer to block its event loop (see worker.mjs).
   */
  onWrite?: (write: ResourceWrite) => { freeze: true } | undefined;
  /**
   * Mirrors the highest accepted token of each key into a file of this folder, so that a worker
   * whose event loop is blocked can still see (with a synchronous read) that the lock moved on.
   */
  mirrorDir?: string;
}

export interface ProtectedResource {
  url: string;
  /** Every write, accepted or rejected, in arrival order. */
  readonly writes: readonly ResourceWrite[];
  close(): Promise<void>;
}

/** File name under `mirrorDir` holding the highest accepted token of `key`. */
export function mirrorFileName(key: string): string {
  return `${encodeURIComponent(key)}.token`;
}

/**
 * The thing a lock protects, with fencing: it refuses any write whose fencing token is lower
 * than the highest it has accepted for that key, as a database row with a `lastToken` column
 * would. It records every write so the checker can replay the history afterwards.
 */
export async function startProtectedResource(
  options: ProtectedResourceOptions = {},
): Promise<ProtectedResource> {
  const writes: ResourceWrite[] = [];
  const highest = new Map<string, number>();
  if (options.mirrorDir) mkdirSync(options.mirrorDir, { recursive: true });

  const server: Server = createServer((req, res) => {
    readJson(req).then(
      (body) => {
        const kind = req.url?.slice(1) ?? '';
        if (req.method !== 'POST' || !KINDS.includes(kind) || !isWriteBody(body)) {
          res
            .writeHead(400)
            .end('expected POST /begin, /step or /commit with key, token, process, worker, unit');
          return;
        }
        const accepted = body.token >= (highest.get(body.key) ?? 0);
        if (accepted && body.token > (highest.get(body.key) ?? 0)) {
          highest.set(body.key, body.token);
          if (options.mirrorDir) {
            writeFileSync(join(options.mirrorDir, mirrorFileName(body.key)), String(body.token));
          }
        }
        const write: ResourceWrite = {
          seq: writes.length,
          at: performance.now(),
          kind: kind as WriteKind,
          ...body,
          accepted,
        };
        writes.push(write);
        const instruction = options.onWrite?.(write);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ accepted, ...instruction }));
      },
      () => res.writeHead(400).end('bad JSON'),
    );
  });
  // A worker that was frozen for a few seconds must find its keep-alive connection still open.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    writes,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

type WriteBody = Pick<
  ResourceWrite,
  'key' | 'token' | 'process' | 'worker' | 'unit' | 'checkedAt' | 'acquiredAt' | 'expiresAt'
>;

function isWriteBody(value: unknown): value is WriteBody {
  const v = value as Partial<WriteBody> | null;
  const optionalNumber = (n: unknown) => n === undefined || Number.isFinite(n);
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.key === 'string' &&
    Number.isSafeInteger(v.token) &&
    typeof v.process === 'string' &&
    typeof v.worker === 'string' &&
    typeof v.unit === 'string' &&
    optionalNumber(v.checkedAt) &&
    optionalNumber(v.acquiredAt) &&
    (v.expiresAt === null || optionalNumber(v.expiresAt))
  );
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}
