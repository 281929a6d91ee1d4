import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The flexible-checksum algorithms S3 accepts (`x-amz-checksum-*`). The server verifies whichever one
 * a client sends — which catches body-decoding mistakes the same way S3 would — and hands the stored
 * value back on GET/HEAD when the client asks with `x-amz-checksum-mode: ENABLED`, so the SDK's own
 * response validation runs against this server too.
 */
export const CHECKSUM_ALGORITHMS = ['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

/**
 * How an object's checksum was built: over the whole body, or (for multipart objects created as
 * COMPOSITE) as a checksum of the parts' checksums with a `-N` part count appended.
 */
export type ChecksumType = 'FULL_OBJECT' | 'COMPOSITE';

/** The checksum an object keeps: the algorithm, its base64 value, and how it was built. */
export interface ObjectChecksum {
  readonly algorithm: ChecksumAlgorithm;
  readonly value: string;
  readonly type: ChecksumType;
}

/** The response headers that report an object's checksum (none when it has none). */
export function checksumHeaders(checksum: ObjectChecksum | undefined): Record<string, string> {
  if (!checksum) return {};
  return { [checksumHeader(checksum.algorithm)]: checksum.value, 'x-amz-checksum-type': checksum.type };
}

export function parseChecksumType(name: string): ChecksumType | undefined {
  const upper = name.trim().toUpperCase();
  return upper === 'FULL_OBJECT' || upper === 'COMPOSITE' ? upper : undefined;
}

export function checksumHeader(algorithm: ChecksumAlgorithm): string {
  return `x-amz-checksum-${algorithm.toLowerCase()}`;
}

export function checksumAlgorithmFromHeader(header: string): ChecksumAlgorithm | undefined {
  const lower = header.toLowerCase();
  return CHECKSUM_ALGORITHMS.find((a) => checksumHeader(a) === lower);
}

export function parseChecksumAlgorithm(name: string): ChecksumAlgorithm | undefined {
  const upper = name.trim().toUpperCase();
  return CHECKSUM_ALGORITHMS.find((a) => a === upper);
}

/** The base64 checksum of `body`, encoded the way S3 encodes it (big-endian CRC bytes, raw digests). */
export function computeChecksum(algorithm: ChecksumAlgorithm, body: Buffer): string {
  switch (algorithm) {
    case 'CRC32':
      return uint32(crc32(body));
    case 'CRC32C':
      return uint32(crc32c(body));
    case 'CRC64NVME':
      return crc64nvme(body);
    case 'SHA1':
      return createHash('sha1').update(body).digest('base64');
    case 'SHA256':
      return createHash('sha256').update(body).digest('base64');
  }
}

/**
 * S3's COMPOSITE checksum of a multipart object: the algorithm applied to the concatenated binary
 * checksums of its parts, base64, then `-<number of parts>`.
 */
export function compositeChecksum(algorithm: ChecksumAlgorithm, partValues: readonly string[]): string {
  const joined = Buffer.concat(partValues.map((value) => Buffer.from(value, 'base64')));
  return `${computeChecksum(algorithm, joined)}-${partValues.length}`;
}

export function md5Base64(body: Buffer): string {
  return createHash('md5').update(body).digest('base64');
}

export function md5Hex(body: Buffer): string {
  return createHash('md5').update(body).digest('hex');
}

export function sha256Hex(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

function uint32(value: number): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0);
  return out.toString('base64');
}

// Reflected table-driven CRCs. node:zlib only offers plain CRC32, so CRC32C (Castagnoli) and
// CRC64/NVME are computed here; the 64-bit one works on two 32-bit halves to stay off BigInt.
const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32c(body: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of body) crc = CRC32C_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// CRC-64/NVME: reflected polynomial 0x9A6C9329AC4BC9B5, init and xorout all ones.
const CRC64_TABLE = (() => {
  const hi = new Uint32Array(256);
  const lo = new Uint32Array(256);
  const polyHi = 0x9a6c9329;
  const polyLo = 0xac4bc9b5;
  for (let n = 0; n < 256; n++) {
    let h = 0;
    let l = n;
    for (let k = 0; k < 8; k++) {
      const carry = l & 1;
      l = ((l >>> 1) | ((h & 1) << 31)) >>> 0;
      h = h >>> 1;
      if (carry) {
        h = (h ^ polyHi) >>> 0;
        l = (l ^ polyLo) >>> 0;
      }
    }
    hi[n] = h;
    lo[n] = l;
  }
  return { hi, lo };
})();

function crc64nvme(body: Buffer): string {
  let h = 0xffffffff;
  let l = 0xffffffff;
  for (const byte of body) {
    const i = (l ^ byte) & 0xff;
    l = (((l >>> 8) | (h << 24)) ^ CRC64_TABLE.lo[i]!) >>> 0;
    h = ((h >>> 8) ^ CRC64_TABLE.hi[i]!) >>> 0;
  }
  const out = Buffer.alloc(8);
  out.writeUInt32BE((h ^ 0xffffffff) >>> 0, 0);
  out.writeUInt32BE((l ^ 0xffffffff) >>> 0, 4);
  return out.toString('base64');
}
