import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { decodeAwsChunked, readRawBody } from './body.js';
import {
  type ChecksumAlgorithm,
  checksumAlgorithmFromHeader,
  checksumHeader,
  computeChecksum,
  md5Base64,
  parseChecksumAlgorithm,
  sha256Hex,
} from './checksums.js';
import { s3Error } from './errors.js';
import { header } from './headers.js';

/**
 * Integrity handling for request bodies, as S3 does it: the `x-amz-content-sha256` mode, `aws-chunked`
 * framing with its decoded length, Content-MD5 and the flexible `x-amz-checksum-*` values (in a header
 * or in a trailer). Signatures are never checked — any credentials are accepted.
 */

const STREAMING_MODES = new Set([
  'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
  'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD',
  'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER',
]);

export interface Checksum {
  algorithm: ChecksumAlgorithm;
  value: string;
}

/** What the headers announce about the body; built before any byte of the body is read. */
export interface PayloadPlan {
  chunked: boolean;
  /** Hex SHA-256 the body must hash to, when the client sent one. */
  sha256?: string;
  /** Body length after aws-chunked decoding, when announced. */
  declaredLength?: number;
  checksumAlgorithm?: ChecksumAlgorithm;
  /** Checksum value from a header; undefined when it travels in the trailer (or there is none). */
  checksumValue?: string;
  checksumInTrailer: boolean;
  contentMd5?: string;
}

export interface RequestPayload {
  body: Buffer;
  checksum?: Checksum;
}

/** Validates the body-describing headers; throws the S3 error S3 would send before reading the body. */
export function planPayload(headers: IncomingHttpHeaders, maxBytes: number): PayloadPlan {
  const mode = header(headers, 'x-amz-content-sha256');
  let sha256: string | undefined;
  if (mode !== undefined && mode !== 'UNSIGNED-PAYLOAD' && !STREAMING_MODES.has(mode)) {
    if (!/^[0-9a-fA-F]{64}$/.test(mode)) {
      throw s3Error('InvalidArgument', {
        message:
          'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, a STREAMING-* value, or a valid sha256 value.',
        extra: { ArgumentName: 'x-amz-content-sha256', ArgumentValue: mode },
      });
    }
    sha256 = mode.toLowerCase();
  }
  const encodings = (header(headers, 'content-encoding') ?? '').split(',').map((e) => e.trim().toLowerCase());
  const chunked = encodings.includes('aws-chunked') || (mode !== undefined && STREAMING_MODES.has(mode));

  let declaredLength: number | undefined;
  if (chunked) {
    const decoded = header(headers, 'x-amz-decoded-content-length');
    if (decoded === undefined) {
      throw s3Error('MissingContentLength', {
        message: 'aws-chunked bodies need the x-amz-decoded-content-length header.',
      });
    }
    declaredLength = parseLength(decoded, 'x-amz-decoded-content-length');
  } else {
    const length = header(headers, 'content-length');
    if (length !== undefined) declaredLength = parseLength(length, 'Content-Length');
  }
  if (declaredLength !== undefined && declaredLength > maxBytes) {
    throw s3Error('EntityTooLarge', {
      closeConnection: true,
      extra: { ProposedSize: String(declaredLength), MaxSizeAllowed: String(maxBytes) },
    });
  }

  // Flexible checksums: at most one x-amz-checksum-<algorithm> header, or one named in x-amz-trailer.
  const checksumHeaders = Object.keys(headers).filter((h) => checksumAlgorithmFromHeader(h) !== undefined);
  if (checksumHeaders.length > 1) {
    throw s3Error('InvalidRequest', {
      message: 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.',
    });
  }
  let checksumAlgorithm = checksumHeaders[0] ? checksumAlgorithmFromHeader(checksumHeaders[0]) : undefined;
  const checksumValue = checksumAlgorithm ? header(headers, checksumHeader(checksumAlgorithm)) : undefined;
  let checksumInTrailer = false;
  const trailer = header(headers, 'x-amz-trailer');
  if (trailer !== undefined) {
    const trailerAlgorithm = checksumAlgorithmFromHeader(trailer.trim());
    if (!trailerAlgorithm || !chunked || checksumAlgorithm) {
      throw s3Error('InvalidRequest', {
        message: 'x-amz-trailer must name one x-amz-checksum-* header, on an aws-chunked body without one.',
      });
    }
    checksumAlgorithm = trailerAlgorithm;
    checksumInTrailer = true;
  }
  const announced = header(headers, 'x-amz-sdk-checksum-algorithm');
  if (announced !== undefined) {
    const algorithm = parseChecksumAlgorithm(announced);
    if (!algorithm) {
      throw s3Error('InvalidRequest', {
        message: 'Value for x-amz-sdk-checksum-algorithm header is invalid.',
      });
    }
    if (algorithm !== checksumAlgorithm) {
      throw s3Error('InvalidRequest', {
        message:
          'x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found.',
      });
    }
  }

  const contentMd5 = header(headers, 'content-md5');
  if (contentMd5 !== undefined && Buffer.from(contentMd5, 'base64').length !== 16) {
    throw s3Error('InvalidDigest');
  }

  const plan: PayloadPlan = { chunked, checksumInTrailer };
  if (sha256 !== undefined) plan.sha256 = sha256;
  if (declaredLength !== undefined) plan.declaredLength = declaredLength;
  if (checksumAlgorithm !== undefined) plan.checksumAlgorithm = checksumAlgorithm;
  if (checksumValue !== undefined) plan.checksumValue = checksumValue;
  if (contentMd5 !== undefined) plan.contentMd5 = contentMd5;
  return plan;
}

/** A PUT of data must say how long it is: a length, aws-chunked framing, or HTTP chunking. */
export function requireLength(plan: PayloadPlan, headers: IncomingHttpHeaders): void {
  if (!plan.chunked && header(headers, 'content-length') === undefined && !headers['transfer-encoding']) {
    throw s3Error('MissingContentLength');
  }
}

/** Reads, decodes and verifies the body according to `plan`. */
export async function readPayload(
  req: IncomingMessage,
  plan: PayloadPlan,
  maxBytes: number,
): Promise<RequestPayload> {
  // aws-chunked framing adds a size line per chunk; allow generous room for it, then check the
  // decoded size against the real limit.
  const raw = await readRawBody(req, plan.chunked ? maxBytes * 2 + 65_536 : maxBytes);
  let body = raw;
  let trailers = new Map<string, string>();
  if (plan.chunked) {
    ({ body, trailers } = decodeAwsChunked(raw));
    if (body.length !== plan.declaredLength) {
      throw s3Error('IncompleteBody', {
        message: `The decoded body has ${body.length} bytes but x-amz-decoded-content-length announced ${plan.declaredLength}.`,
      });
    }
  }
  if (body.length > maxBytes)
    throw s3Error('EntityTooLarge', { extra: { MaxSizeAllowed: String(maxBytes) } });
  if (plan.sha256 !== undefined && sha256Hex(body) !== plan.sha256) {
    throw s3Error('XAmzContentSHA256Mismatch', {
      extra: { ClientComputedContentSHA256: plan.sha256, S3ComputedContentSHA256: sha256Hex(body) },
    });
  }
  if (plan.contentMd5 !== undefined && md5Base64(body) !== plan.contentMd5) {
    throw s3Error('BadDigest', { message: 'The Content-MD5 you specified did not match what we received.' });
  }
  if (!plan.checksumAlgorithm) return { body };

  const algorithm = plan.checksumAlgorithm;
  const value = plan.checksumInTrailer ? trailers.get(checksumHeader(algorithm)) : plan.checksumValue;
  if (value === undefined) {
    throw s3Error('InvalidRequest', { message: `The trailer did not carry ${checksumHeader(algorithm)}.` });
  }
  if (computeChecksum(algorithm, body) !== value) {
    throw s3Error('BadDigest', {
      message: `The ${algorithm} you specified did not match the calculated checksum.`,
    });
  }
  return { body, checksum: { algorithm, value } };
}

function parseLength(text: string, name: string): number {
  if (!/^\d{1,15}$/.test(text.trim())) {
    throw s3Error('InvalidArgument', {
      message: `${name} is not a valid length.`,
      extra: { ArgumentName: name },
    });
  }
  return Number(text.trim());
}
