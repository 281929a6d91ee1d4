import { createHash, randomBytes } from 'node:crypto';
import {
  type ChecksumAlgorithm,
  type ChecksumType,
  checksumHeader,
  compositeChecksum,
  computeChecksum,
  type ObjectChecksum,
} from './checksums.js';
import { s3Error } from './errors.js';
import type { ObjectProperties } from './object-properties.js';
import type { Checksum } from './payload.js';

/** S3's multipart limits: part numbers 1..10000, parts of 5 MiB (but the last) up to 5 GiB. */
export const MAX_PART_NUMBER = 10_000;
export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const MAX_PART_SIZE = 5 * 1024 * 1024 * 1024;

/** One uploaded part, replaced as a whole when the same part number is uploaded again. */
export interface UploadedPart {
  readonly partNumber: number;
  readonly body: Buffer;
  /** The binary MD5 of the body: the part's ETag in hex, and the input of the object's ETag. */
  readonly md5: Buffer;
  /** Quoted hex MD5, as the UploadPart answer sent it. */
  readonly etag: string;
  readonly lastModified: Date;
  readonly checksum?: Checksum;
}

/** The checksum a multipart upload was created with (`x-amz-checksum-algorithm` / `-type`). */
export interface UploadChecksum {
  readonly algorithm: ChecksumAlgorithm;
  readonly type: ChecksumType;
}

/** A multipart upload in progress: what CreateMultipartUpload said, and the parts so far. */
export class MultipartUpload {
  readonly id = randomBytes(24).toString('base64url');
  readonly initiated = new Date();
  private readonly parts = new Map<number, UploadedPart>();

  constructor(
    readonly key: string,
    readonly properties: ObjectProperties,
    readonly checksum: UploadChecksum | undefined,
  ) {}

  part(partNumber: number): UploadedPart | undefined {
    return this.parts.get(partNumber);
  }

  /** Every part so far, by ascending part number. */
  sortedParts(): UploadedPart[] {
    return [...this.parts.values()].sort((a, b) => a.partNumber - b.partNumber);
  }

  /**
   * Stores `body` as part `partNumber`. `sent` is the checksum the request carried (already verified
   * against the body). An upload created with a checksum algorithm keeps that algorithm's checksum of
   * every part, computed here when the client sent none, so that Complete can combine them.
   */
  putPart(partNumber: number, body: Buffer, sent: Checksum | undefined): UploadedPart {
    const md5 = createHash('md5').update(body).digest();
    let checksum = sent;
    const expected = this.checksum?.algorithm;
    if (expected !== undefined) {
      if (sent && sent.algorithm !== expected) {
        throw s3Error('InvalidRequest', {
          message: `Checksum Type mismatch occurred, expected checksum Type: ${expected.toLowerCase()}, actual checksum Type: ${sent.algorithm.toLowerCase()}`,
        });
      }
      checksum ??= { algorithm: expected, value: computeChecksum(expected, body) };
    }
    const part: UploadedPart = {
      partNumber,
      body,
      md5,
      etag: `"${md5.toString('hex')}"`,
      lastModified: new Date(),
      ...(checksum ? { checksum } : {}),
    };
    this.parts.set(partNumber, part);
    return part;
  }

  /** The checksum of the object assembled from `parts`, when the upload was created with one. */
  objectChecksum(parts: readonly UploadedPart[], body: Buffer): ObjectChecksum | undefined {
    if (!this.checksum) return undefined;
    const { algorithm, type } = this.checksum;
    const value =
      type === 'COMPOSITE'
        ? compositeChecksum(
            algorithm,
            parts.map((p) => p.checksum?.value ?? ''),
          )
        : computeChecksum(algorithm, body);
    return { algorithm, value, type };
  }
}

/**
 * The ETag S3 gives a multipart object: the hex MD5 of the parts' binary MD5s one after another,
 * then `-<number of parts>`. It is not the MD5 of the body, and clients recognise it by the suffix.
 */
export function multipartEtag(parts: readonly UploadedPart[]): string {
  const digest = createHash('md5');
  for (const part of parts) digest.update(part.md5);
  return `"${digest.digest('hex')}-${parts.length}"`;
}

/** The `partNumber` query parameter: an integer from 1 to 10000, else 400 InvalidArgument. */
export function parsePartNumber(value: string | null): number {
  if (value === null || !/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > MAX_PART_NUMBER) {
    throw s3Error('InvalidArgument', {
      message: `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`,
      extra: { ArgumentName: 'partNumber', ArgumentValue: value ?? '' },
    });
  }
  return Number(value);
}

/** The response header that reports a part's checksum (none when it has none). */
export function partChecksumHeaders(part: UploadedPart): Record<string, string> {
  return part.checksum ? { [checksumHeader(part.checksum.algorithm)]: part.checksum.value } : {};
}
