import type { IncomingMessage } from 'node:http';
import type { Bucket, BucketStore } from './bucket-store.js';
import { s3Error } from './errors.js';
import type { S3Personality } from './personality.js';
import type { Route } from './routes.js';
import { parseXml, type XmlNode, xmlDocument } from './xml.js';

/** Server-wide settings the handlers consult. */
export interface HandlerConfig {
  readonly region: string;
  readonly conditionalWrites: boolean;
  /** How the server departs from AWS S3 (see S3Personality). */
  readonly personality: S3Personality;
  readonly maxObjectSize: number;
}

/** One request on its way through a handler. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly route: Route;
  readonly store: BucketStore;
  readonly config: HandlerConfig;
  /**
   * The bucket and the key's change sequence as they were when the request arrived, before its body
   * was read. A conditional write commits only if neither changed meanwhile.
   */
  readonly arrival: { readonly bucket: Bucket | undefined; readonly version: number };
}

/** What a handler produces; the server writes it out (or, under a fault, drops it). */
export interface S3Response {
  status: number;
  headers?: Record<string, string | number>;
  body?: Buffer | string;
}

export type Handler = (ctx: RequestContext) => Promise<S3Response>;

/** Route fields a handler for an object/bucket operation can rely on. */
export function bucketName(ctx: RequestContext): string {
  return ctx.route.bucket ?? '';
}

export function objectKey(ctx: RequestContext): string {
  return ctx.route.key ?? '';
}

/** A successful XML answer (listings, DeleteObjects results). */
export function xmlResponse(root: string, status = 200): S3Response {
  return { status, headers: { 'content-type': 'application/xml' }, body: xmlDocument(root) };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A request body that must be one UTF-8 XML document with root element `root`; else MalformedXML. */
export function parseXmlBody(body: Buffer, root: string): XmlNode {
  let node: XmlNode;
  try {
    node = parseXml(utf8.decode(body));
  } catch {
    throw s3Error('MalformedXML');
  }
  if (node.local !== root) throw s3Error('MalformedXML');
  return node;
}
