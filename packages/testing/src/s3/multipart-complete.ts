import { CHECKSUM_ALGORITHMS, type ChecksumAlgorithm } from './checksums.js';
import { parseEtagList } from './conditions.js';
import { parseXmlBody } from './context.js';
import { s3Error } from './errors.js';
import { MIN_PART_SIZE, type MultipartUpload, type UploadedPart } from './multipart-upload.js';
import { childrenNamed, childText } from './xml.js';

/** One `<Part>` of a CompleteMultipartUpload body. */
export interface RequestedPart {
  readonly partNumber: number;
  readonly etag: string;
  /** `<ChecksumCRC32>` and the like, when the client listed the part's checksum. */
  readonly checksums: ReadonlyMap<ChecksumAlgorithm, string>;
}

/** A CompleteMultipartUpload body lists at most 10000 parts; this leaves room for generous markup. */
export const MAX_COMPLETE_BODY = 10 * 1024 * 1024;

/**
 * Parses `<CompleteMultipartUpload><Part><PartNumber/><ETag/>...</Part>...</CompleteMultipartUpload>`.
 * A body that is not that document, lists no part, or has a part without a whole number or an ETag
 * gets MalformedXML, as on S3.
 */
export function parseCompleteRequest(body: Buffer): RequestedPart[] {
  const root = parseXmlBody(body, 'CompleteMultipartUpload');
  const nodes = childrenNamed(root, 'Part');
  if (nodes.length === 0) throw s3Error('MalformedXML');
  return nodes.map((node) => {
    const partNumber = childText(node, 'PartNumber')?.trim();
    const etag = childText(node, 'ETag');
    if (partNumber === undefined || !/^\d{1,9}$/.test(partNumber) || etag === undefined) {
      throw s3Error('MalformedXML');
    }
    const checksums = new Map<ChecksumAlgorithm, string>();
    for (const algorithm of CHECKSUM_ALGORITHMS) {
      const value = childText(node, `Checksum${algorithm}`);
      if (value !== undefined) checksums.set(algorithm, value.trim());
    }
    return { partNumber: Number(partNumber), etag, checksums };
  });
}

/**
 * The uploaded parts a Complete request names, checked the way S3 checks them: part numbers in
 * strictly ascending order (InvalidPartOrder), each part uploaded with the ETag (and checksum, when
 * listed) the request gives (InvalidPart), and every part but the last at least 5 MiB
 * (EntityTooSmall). Part numbers may have gaps; parts left out are discarded with the upload.
 */
export function selectParts(upload: MultipartUpload, requested: readonly RequestedPart[]): UploadedPart[] {
  for (let i = 1; i < requested.length; i++) {
    if (requested[i]!.partNumber <= requested[i - 1]!.partNumber) throw s3Error('InvalidPartOrder');
  }
  const parts = requested.map((wanted) => {
    const part = upload.part(wanted.partNumber);
    const etags = parseEtagList(wanted.etag);
    if (!part || etags.any || !etags.tags.includes(part.etag.slice(1, -1))) throw invalidPart(wanted);
    for (const [algorithm, value] of wanted.checksums) {
      if (part.checksum?.algorithm === algorithm && part.checksum.value !== value) throw invalidPart(wanted);
    }
    return part;
  });
  parts.forEach((part, i) => {
    if (i < parts.length - 1 && part.body.length < MIN_PART_SIZE) {
      throw s3Error('EntityTooSmall', {
        extra: {
          ProposedSize: String(part.body.length),
          MinSizeAllowed: String(MIN_PART_SIZE),
          PartNumber: String(part.partNumber),
          ETag: part.etag.slice(1, -1),
        },
      });
    }
  });
  return parts;
}

function invalidPart(part: RequestedPart) {
  return s3Error('InvalidPart', {
    extra: { PartNumber: String(part.partNumber), ETag: part.etag },
  });
}
