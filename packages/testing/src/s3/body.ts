import type { IncomingMessage } from 'node:http';
import { s3Error } from './errors.js';

/** The client went away before its request body was complete: nobody is left to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('client disconnected before the request body was complete');
    this.name = 'ClientGoneError';
  }
}

/**
 * Collects the raw request body. Going over `limit` rejects with EntityTooLarge at once (the rest is
 * not read, so the server closes that connection after answering); a client that disconnects midway
 * rejects with {@link ClientGoneError}, so a half-received body is never applied.
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      fn();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        settle(() => reject(s3Error('EntityTooLarge', { closeConnection: true, extra: maxSize(limit) })));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => settle(() => resolve(Buffer.concat(chunks, size))));
    req.once('error', () => settle(() => reject(new ClientGoneError())));
    req.once('close', () => {
      if (!req.complete) settle(() => reject(new ClientGoneError()));
    });
  });
}

function maxSize(limit: number): Record<string, string> {
  return { MaxSizeAllowed: String(limit) };
}

export interface DecodedChunkedBody {
  body: Buffer;
  /** Trailing headers after the final chunk, names lower-cased (e.g. `x-amz-checksum-crc32`). */
  trailers: Map<string, string>;
}

const CRLF = Buffer.from('\r\n');

/**
 * Decodes an `aws-chunked` body: `hex-size[;chunk-signature=...]\r\n<data>\r\n` repeated, a zero-size
 * chunk, then optional trailer lines and a blank line. Signed and unsigned variants share this framing;
 * signatures are not verified. Truncation answers IncompleteBody, any other framing fault InvalidRequest.
 */
export function decodeAwsChunked(raw: Buffer): DecodedChunkedBody {
  const parts: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const lineEnd = raw.indexOf(CRLF, pos);
    if (lineEnd < 0) throw truncated();
    const header = raw.toString('latin1', pos, lineEnd);
    const [sizeText = '', ...extensions] = header.split(';');
    if (!/^[0-9A-Fa-f]{1,12}$/.test(sizeText))
      throw malformed(`bad chunk size line ${JSON.stringify(header)}`);
    for (const ext of extensions) {
      if (!/^[A-Za-z0-9-]+=[^;]*$/.test(ext)) throw malformed(`bad chunk extension ${JSON.stringify(ext)}`);
    }
    const size = Number.parseInt(sizeText, 16);
    pos = lineEnd + 2;
    if (size === 0) break;
    if (pos + size + 2 > raw.length) throw truncated();
    parts.push(raw.subarray(pos, pos + size));
    pos += size;
    if (raw[pos] !== 0x0d || raw[pos + 1] !== 0x0a) throw malformed('chunk data not followed by CRLF');
    pos += 2;
  }
  const trailers = new Map<string, string>();
  // Trailer section: "name:value" lines ended by an empty line. A missing final empty line at the very
  // end of the body is tolerated, anything after it is not.
  while (pos < raw.length) {
    const lineEnd = raw.indexOf(CRLF, pos);
    const line = raw.toString('latin1', pos, lineEnd < 0 ? raw.length : lineEnd);
    pos = lineEnd < 0 ? raw.length : lineEnd + 2;
    if (line === '') {
      if (pos !== raw.length) throw malformed('data after the end of the aws-chunked body');
      break;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformed(`bad trailer line ${JSON.stringify(line)}`);
    trailers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { body: Buffer.concat(parts), trailers };
}

function truncated() {
  return s3Error('IncompleteBody', { message: 'The aws-chunked request body ended before its final chunk.' });
}

function malformed(detail: string) {
  return s3Error('InvalidRequest', { message: `Malformed aws-chunked request body: ${detail}.` });
}
