import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { listen } from '../listen.js';
import { checkOptionKeys } from '../option-keys.js';
import { resetSocket } from '../reset-socket.js';
import { accessKeyTable, CLIENT_CONFIG_ACCESS_KEY, refusal, type S3AccessKeyVerdict } from './access.js';
import { ClientGoneError, readRawBody } from './body.js';
import {
  createBucket,
  deleteBucket,
  getBucketLocation,
  headBucket,
  listBuckets,
  listObjects,
  listObjectsV2,
} from './bucket-handlers.js';
import { type Bucket, BucketStore, isValidBucketName } from './bucket-store.js';
import type { Handler, HandlerConfig, RequestContext, S3Response } from './context.js';
import { copyObject, uploadPartCopy } from './copy-handlers.js';
import { errorXml, S3Error, s3Error } from './errors.js';
import { type FaultPlan, type S3FaultKind, S3Faults } from './faults.js';
import {
  abortMultipartUpload,
  completeMultipartUpload,
  createMultipartUpload,
  listMultipartUploads,
  listParts,
  uploadPart,
} from './multipart-handlers.js';
import { deleteObject, deleteObjects, getObject, headObject, putObject } from './object-handlers.js';
import { getObjectTagging } from './object-tagging.js';
import { resolvePersonality, type S3Personality, type S3PersonalityName } from './personality.js';
import { type Route, routeRequest, type S3Operation } from './routes.js';

export type { S3AccessKeyVerdict } from './access.js';
export type { ApplyLateOptions, S3FaultHandle, S3FaultKind, S3FaultMatcher } from './faults.js';
export type { ConditionHandling, S3Personality, S3PersonalityName } from './personality.js';
export { S3_PERSONALITIES } from './personality.js';
export type { S3Operation } from './routes.js';
export { S3Faults };

export interface S3ServerOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** A bucket to create at start; exposed as `server.bucket`. */
  bucket?: string;
  /**
   * Default true. `false` imitates an S3-compatible store without conditional-write support:
   * If-Match / If-None-Match on PutObject, CompleteMultipartUpload, CopyObject and DeleteObject (and
   * ETag in DeleteObjects) are ignored and every write is applied unconditionally. Conditional
   * GET/HEAD and CopyObject's `x-amz-copy-source-if-*` conditions keep working.
   */
  conditionalWrites?: boolean;
  /**
   * Region reported by HeadBucket / GetBucketLocation and accepted as LocationConstraint. Default
   * `us-east-1`. It also decides CreateBucket of a bucket that exists: 200 in us-east-1 (S3's legacy
   * behaviour there), 409 BucketAlreadyOwnedByYou in any other region.
   */
  region?: string;
  /**
   * Largest body of one request — a PutObject, or one part of a multipart upload — accepted; bigger
   * bodies get 400 EntityTooLarge. Default 50 MiB. A multipart object can be larger: it is as big as
   * its parts add up to.
   */
  maxObjectSize?: number;
  /**
   * Answer by access key, as S3 does, instead of accepting any credentials: requests signed with a
   * key marked 'allow' are served; 'deny' gets 403 AccessDenied, as does an unsigned request; a key
   * not listed gets 403 InvalidAccessKeyId. The key `clientConfig()` hands out is allowed unless
   * listed as 'deny'. Signatures are still not checked. Default: every key is accepted.
   */
  accessKeys?: Readonly<Record<string, S3AccessKeyVerdict>>;
  /**
   * Behave like an S3-compatible store that departs from AWS S3: a name from
   * {@link S3_PERSONALITIES} or the fields of {@link S3Personality}. Default: AWS S3's behaviour.
   */
  personality?: S3PersonalityName | S3Personality;
}

const S3_SERVER_OPTIONS: Record<keyof S3ServerOptions, true> = {
  port: true,
  host: true,
  bucket: true,
  conditionalWrites: true,
  region: true,
  maxObjectSize: true,
  accessKeys: true,
  personality: true,
};
const S3_SERVER_OPTION_KEYS = Object.keys(S3_SERVER_OPTIONS);

export interface S3RequestLogEntry {
  readonly op: S3Operation;
  readonly method: string;
  readonly bucket?: string;
  readonly key?: string;
  /**
   * The HTTP status the server answered with. With `fault: 'dropResponseAfterApply'` or `'applyLate'`
   * it is the status that was decided but never delivered; 0 when no answer was produced at all
   * (`resetBeforeApply`, a client that disconnected mid-request, or a late request still waiting
   * when the server stopped). A late-applied request is logged when it is applied.
   */
  readonly status: number;
  /** The fault that fired on this request, if any (latency is not recorded). */
  readonly fault?: Exclude<S3FaultKind, 'latency'>;
}

/** Settings that point an `S3Client` (AWS SDK v3) at this server: `new S3Client(server.clientConfig())`. */
export interface S3ClientSettings {
  endpoint: string;
  region: string;
  forcePathStyle: true;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export interface S3Server {
  /** `http://host:port`, for path-style clients. */
  readonly endpoint: string;
  readonly host: string;
  readonly port: number;
  readonly region: string;
  /** The bucket created at start, when `options.bucket` was given. */
  readonly bucket: string | undefined;
  /** Fault injection; see {@link S3Faults}. */
  readonly faults: S3Faults;
  /** One entry per finished request, in completion order. */
  readonly requestLog: readonly S3RequestLogEntry[];
  resetRequestLog(): void;
  clientConfig(): S3ClientSettings;
  /** Closes the listener and every open connection. Idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const HANDLERS: Record<Exclude<S3Operation, 'Unsupported'>, Handler> = {
  ListBuckets: listBuckets,
  CreateBucket: createBucket,
  HeadBucket: headBucket,
  DeleteBucket: deleteBucket,
  GetBucketLocation: getBucketLocation,
  ListObjects: listObjects,
  ListObjectsV2: listObjectsV2,
  DeleteObjects: deleteObjects,
  PutObject: putObject,
  GetObject: getObject,
  HeadObject: headObject,
  GetObjectTagging: getObjectTagging,
  DeleteObject: deleteObject,
  CopyObject: copyObject,
  CreateMultipartUpload: createMultipartUpload,
  UploadPart: uploadPart,
  UploadPartCopy: uploadPartCopy,
  CompleteMultipartUpload: completeMultipartUpload,
  AbortMultipartUpload: abortMultipartUpload,
  ListParts: listParts,
  ListMultipartUploads: listMultipartUploads,
};

/**
 * Starts an in-memory, S3-compatible HTTP server for tests: path-style requests, conditional writes
 * with S3's status codes, and fault injection. Any credentials are accepted unless `accessKeys` says
 * otherwise; signatures are not checked.
 */
export async function startS3Server(options: S3ServerOptions = {}): Promise<S3Server> {
  checkOptionKeys('startS3Server()', options, S3_SERVER_OPTION_KEYS);
  const host = options.host ?? '127.0.0.1';
  const region = options.region ?? 'us-east-1';
  const personality = resolvePersonality(options.personality);
  const config: HandlerConfig = {
    region,
    conditionalWrites: options.conditionalWrites ?? true,
    personality,
    maxObjectSize: options.maxObjectSize ?? 50 * 1024 * 1024,
  };
  const accessKeys = accessKeyTable(options.accessKeys);
  const store = new BucketStore(personality.staleReadsMs ?? 0);
  if (options.bucket !== undefined) {
    if (!isValidBucketName(options.bucket)) throw new Error(`invalid S3 bucket name: ${options.bucket}`);
    store.create(options.bucket);
  }
  const faults = new S3Faults();
  const requestLog: S3RequestLogEntry[] = [];
  const stopping = new AbortController();

  const server = createServer((req, res) => {
    // Node adds a Date of its own unless one is set: a server whose clock is off states its own.
    if (personality.clockOffsetMs)
      res.setHeader('date', new Date(Date.now() + personality.clockOffsetMs).toUTCString());
    const state = { store, config, accessKeys, faults, requestLog, signal: stopping.signal };
    handleRequest(state, req, res).catch(() => {
      // handleRequest answers every failure itself; this only guards against a rejection escaping.
      req.socket.destroy();
    });
  });
  // Long enough that a test never races the server closing an idle keep-alive connection.
  server.keepAliveTimeout = 30_000;

  const port = await listen(server, options.port ?? 0, host);
  const endpoint = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= new Promise<void>((resolve) => {
      stopping.abort();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return stopped;
  };

  return {
    endpoint,
    host,
    port,
    region,
    bucket: options.bucket,
    faults,
    requestLog,
    resetRequestLog: () => {
      requestLog.length = 0;
    },
    clientConfig: () => ({
      endpoint,
      region,
      forcePathStyle: true,
      credentials: { accessKeyId: CLIENT_CONFIG_ACCESS_KEY, secretAccessKey: 'latch-testing' },
    }),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

interface ServerState {
  store: BucketStore;
  config: HandlerConfig;
  /** Verdicts by access key id; undefined when every key is accepted. */
  accessKeys: ReadonlyMap<string, S3AccessKeyVerdict> | undefined;
  faults: S3Faults;
  requestLog: S3RequestLogEntry[];
  signal: AbortSignal;
}

async function handleRequest(state: ServerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  const requestId = nextRequestId();
  const route = routeRequest(method, req.url ?? '/', req.headers['x-amz-copy-source'] !== undefined);
  // The bucket and key the request names, for fault matching and the log.
  const where = {
    ...(route.bucket !== undefined ? { bucket: route.bucket } : {}),
    ...(route.key !== undefined ? { key: route.key } : {}),
  };
  const log = (status: number, fault?: Exclude<S3FaultKind, 'latency'>) => {
    state.requestLog.push({ op: route.op, method, ...where, status, ...(fault ? { fault } : {}) });
  };

  // Checked first, as S3 does: a refused request reaches no bucket and uses up no fault.
  const refused = state.accessKeys && refusal(state.accessKeys, req.headers, route.query);
  if (refused) {
    log(send(res, errorResponse(refused, method, requestId), requestId, method));
    return;
  }

  let plan: FaultPlan = { delayBeforeMs: 0, delayAfterMs: 0 };
  let response: S3Response;
  try {
    // Captured before anything asynchronous happens: the state this request's preconditions refer to.
    const arrival = arrivalState(state.store, route);
    plan = state.faults.planFor({ op: route.op, ...where });
    if (plan.delayBeforeMs > 0) await sleep(plan.delayBeforeMs, state.signal);
    if (plan.action === 'resetBeforeApply') {
      resetSocket(req.socket);
      log(0, plan.action);
      return;
    }
    if (plan.action === 'applyLate') {
      await applyLate(state, req, route, plan.applyLateMs ?? 0, (status) => log(status, 'applyLate'));
      return;
    }
    if (plan.action === 'slowDown' || plan.action === 'internalError') {
      response = errorResponse(
        s3Error(plan.action === 'slowDown' ? 'SlowDown' : 'InternalError'),
        method,
        requestId,
      );
    } else if (route.error) {
      response = errorResponse(route.error, method, requestId);
    } else {
      const ctx: RequestContext = { req, route, store: state.store, config: state.config, arrival };
      response = await HANDLERS[route.op as Exclude<S3Operation, 'Unsupported'>](ctx);
    }
  } catch (err) {
    if (err instanceof ClientGoneError) {
      resetSocket(req.socket);
      log(0);
      return;
    }
    // Anything that is not an S3 error is a bug in this server: answer 500 rather than crash.
    response = errorResponse(err instanceof S3Error ? err : internalError(err), method, requestId);
  }

  if (plan.delayAfterMs > 0) await sleep(plan.delayAfterMs, state.signal);
  if (plan.action === 'dropResponseAfterApply') {
    resetSocket(req.socket);
    log(response.status, plan.action);
    return;
  }
  log(send(res, response, requestId, method), plan.action);
}

/** The bucket and the key's change sequence now: what a request arriving now has its preconditions judged against. */
function arrivalState(store: BucketStore, route: Route): RequestContext['arrival'] {
  const bucket: Bucket | undefined = route.bucket !== undefined ? store.get(route.bucket) : undefined;
  return { bucket, version: bucket && route.key !== undefined ? bucket.version(route.key) : 0 };
}

/**
 * The `applyLate` fault: takes the whole request, cuts the connection without an answer, and
 * applies the request `delayMs` later as if it arrived then (its conditions are judged against the
 * state of that moment). The answer goes nowhere; `log` gets its status.
 */
async function applyLate(
  state: ServerState,
  req: IncomingMessage,
  route: Route,
  delayMs: number,
  log: (status: number) => void,
): Promise<void> {
  // The same room for aws-chunked framing the handlers allow; a bigger body is refused as usual.
  const body = await readRawBody(req, state.config.maxObjectSize * 2 + 65_536);
  resetSocket(req.socket);
  await sleep(delayMs, state.signal);
  if (state.signal.aborted) return log(0);
  const late = Object.assign(Readable.from([body]), {
    headers: req.headers,
    method: req.method,
    url: req.url,
    complete: true,
  }) as unknown as IncomingMessage;
  let status: number;
  try {
    if (route.error) throw route.error;
    const ctx: RequestContext = {
      req: late,
      route,
      store: state.store,
      config: state.config,
      arrival: arrivalState(state.store, route),
    };
    status = (await HANDLERS[route.op as Exclude<S3Operation, 'Unsupported'>](ctx)).status;
  } catch (err) {
    status = err instanceof S3Error ? err.status : 500;
  }
  log(status);
}

function internalError(err: unknown): S3Error {
  const detail = err instanceof Error ? err.message : String(err);
  return s3Error('InternalError', {
    message: `We encountered an internal error. Please try again. (${detail})`,
  });
}

function errorResponse(error: S3Error, method: string, requestId: string): S3Response {
  const headers: Record<string, string> = { ...error.details.headers };
  if (error.details.closeConnection) headers.connection = 'close';
  // HEAD answers and 304 never carry a body; clients go by the status code alone, as with S3.
  if (method === 'HEAD' || error.status === 304) return { status: error.status, headers };
  headers['content-type'] = 'application/xml';
  return { status: error.status, headers, body: errorXml(error, requestId, HOST_ID) };
}

/** Writes the response; returns the status actually sent (0 when the connection is already gone). */
function send(res: ServerResponse, response: S3Response, requestId: string, method: string): number {
  if (res.headersSent || res.destroyed) return 0;
  const headers: Record<string, string | number> = {
    ...response.headers,
    'x-amz-request-id': requestId,
    'x-amz-id-2': HOST_ID,
    server: 'LatchS3',
  };
  if (response.body !== undefined && headers['content-length'] === undefined) {
    headers['content-length'] = Buffer.byteLength(response.body);
  }
  try {
    res.writeHead(response.status, headers);
  } catch (err) {
    // e.g. a header value Node refuses to send (a response-* override with characters outside latin1).
    const fallback = errorResponse(internalError(err), method, requestId);
    res.writeHead(fallback.status, { ...fallback.headers, 'x-amz-request-id': requestId });
    res.end(fallback.body);
    return fallback.status;
  }
  res.end(response.body);
  return response.status;
}

// Request ids: a random per-process prefix and a counter. Unique, and far cheaper than drawing random
// bytes for every request.
const ID_PREFIX = randomBytes(4).toString('hex').toUpperCase();
let requestCounter = 0;
function nextRequestId(): string {
  requestCounter = (requestCounter + 1) % 0x100000000;
  return ID_PREFIX + requestCounter.toString(16).toUpperCase().padStart(8, '0');
}

// The x-amz-id-2 header and the HostId of error documents: one opaque value per process.
const HOST_ID = randomBytes(24).toString('base64');

async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  await delay(ms, undefined, { signal }).catch(() => undefined);
}
