import { xmlDocument, xmlElement } from './xml.js';

/**
 * The S3 error codes this server can answer with, each with the HTTP status Amazon S3 uses for it
 * and a default message. Clients (the AWS SDK included) derive their exception name from `Code`,
 * so the codes must be spelled exactly as S3 spells them.
 */
const CATALOG = {
  AccessDenied: [403, 'Access Denied'],
  BadDigest: [400, 'The checksum you specified did not match the calculated checksum.'],
  BucketAlreadyOwnedByYou: [
    409,
    'Your previous request to create the named bucket succeeded and you already own it.',
  ],
  BucketNotEmpty: [409, 'The bucket you tried to delete is not empty.'],
  ConditionalRequestConflict: [
    409,
    'The conditional request cannot succeed due to a conflicting operation against this resource.',
  ],
  EntityTooLarge: [400, 'Your proposed upload exceeds the maximum allowed size.'],
  EntityTooSmall: [400, 'Your proposed upload is smaller than the minimum allowed object size.'],
  IllegalLocationConstraintException: [
    400,
    'The location constraint does not match the region of this server.',
  ],
  IncompleteBody: [400, 'The request body ended before the announced number of bytes was received.'],
  InternalError: [500, 'We encountered an internal error. Please try again.'],
  InvalidAccessKeyId: [403, 'The AWS Access Key Id you provided does not exist in our records.'],
  InvalidArgument: [400, 'Invalid Argument'],
  InvalidBucketName: [400, 'The specified bucket is not valid.'],
  InvalidDigest: [400, 'The Content-MD5 you specified was invalid.'],
  InvalidPart: [
    400,
    "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
  ],
  InvalidPartOrder: [
    400,
    'The list of parts was not in ascending order. Parts must be ordered by part number.',
  ],
  InvalidRange: [416, 'The requested range is not satisfiable'],
  InvalidRequest: [400, 'Invalid Request'],
  InvalidURI: [400, "Couldn't parse the specified URI."],
  KeyTooLongError: [400, 'Your key is too long'],
  MalformedXML: [
    400,
    'The XML you provided was not well-formed or did not validate against our published schema.',
  ],
  MetadataTooLarge: [400, 'Your metadata headers exceed the maximum allowed metadata size.'],
  MethodNotAllowed: [405, 'The specified method is not allowed against this resource.'],
  MissingContentLength: [411, 'You must provide the Content-Length HTTP header.'],
  NoSuchBucket: [404, 'The specified bucket does not exist'],
  NoSuchKey: [404, 'The specified key does not exist.'],
  NoSuchUpload: [
    404,
    'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
  ],
  NoSuchVersion: [404, 'The specified version does not exist.'],
  NotImplemented: [501, 'A header or operation you provided implies functionality that is not implemented.'],
  NotModified: [304, 'Not Modified'],
  PreconditionFailed: [412, 'At least one of the pre-conditions you specified did not hold'],
  SlowDown: [503, 'Please reduce your request rate.'],
  XAmzContentSHA256Mismatch: [
    400,
    "The provided 'x-amz-content-sha256' header does not match what was computed.",
  ],
} as const satisfies Record<string, readonly [number, string]>;

export type S3ErrorCode = keyof typeof CATALOG;

export interface S3ErrorDetails {
  message?: string;
  bucket?: string;
  key?: string;
  /** Extra child elements of `<Error>` that S3 adds for some codes, e.g. `Condition` or `Header`. */
  extra?: Record<string, string>;
  /** Response headers to send along (304 Not Modified carries ETag and Last-Modified). */
  headers?: Record<string, string>;
  /** Ask the plumbing to close the connection after answering (used when the body was not read). */
  closeConnection?: boolean;
}

/** An S3-level failure: thrown by handlers, turned into an S3 XML error response by the server. */
export class S3Error extends Error {
  readonly code: S3ErrorCode;
  readonly status: number;
  readonly details: S3ErrorDetails;

  constructor(code: S3ErrorCode, details: S3ErrorDetails = {}) {
    const [status, defaultMessage] = CATALOG[code];
    super(details.message ?? defaultMessage);
    this.name = 'S3Error';
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

export function s3Error(code: S3ErrorCode, details?: S3ErrorDetails): S3Error {
  return new S3Error(code, details);
}

/** The default message S3 uses for a code; DeleteObjects reports per-key errors with it. */
export function defaultMessage(code: S3ErrorCode): string {
  return CATALOG[code][1];
}

/** The `<Error>` document S3 sends in the body of a failed (non-HEAD) response. */
export function errorXml(error: S3Error, requestId: string, hostId: string): string {
  const children = [xmlElement('Code', error.code), xmlElement('Message', error.message)];
  if (error.details.key !== undefined) children.push(xmlElement('Key', error.details.key));
  if (error.details.bucket !== undefined) children.push(xmlElement('BucketName', error.details.bucket));
  for (const [name, value] of Object.entries(error.details.extra ?? {}))
    children.push(xmlElement(name, value));
  children.push(xmlElement('RequestId', requestId), xmlElement('HostId', hostId));
  return xmlDocument(xmlElement('Error', children));
}
