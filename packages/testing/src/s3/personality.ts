/**
 * What the server does with one conditional header of a write:
 * - 'honour': as AWS S3 does (412 when it does not hold);
 * - 'ignore': applies the write as if the header were absent, answering success (the store that
 *   says yes but does not lock);
 * - 'not-implemented': answers 501 NotImplemented and applies nothing.
 */
export type ConditionHandling = 'honour' | 'ignore' | 'not-implemented';

/**
 * How far the server departs from AWS S3, to show what a client does on S3-compatible stores that
 * behave differently. Every field defaults to AWS S3's behaviour.
 */
export interface S3Personality {
  /** `If-None-Match: *` on PutObject (create only if absent). */
  readonly putIfNoneMatch?: ConditionHandling;
  /** `If-Match: <etag>` on PutObject (replace only that version). */
  readonly putIfMatch?: ConditionHandling;
  /** `If-Match: <etag>` on DeleteObject (and an ETag in DeleteObjects). */
  readonly deleteIfMatch?: ConditionHandling;
  /**
   * GetObject and HeadObject see each key as it was this many milliseconds ago (writes are
   * applied at once; reads lag behind them). Default 0: reads see every write that was answered.
   */
  readonly staleReadsMs?: number;
  /**
   * The server's clock runs this many milliseconds ahead of the machine's (behind when negative),
   * as the HTTP `Date` of every answer shows. Default 0.
   */
  readonly clockOffsetMs?: number;
  /**
   * Each page of ListObjectsV2 names its objects out of key order (reversed), as a store whose
   * listings are not sorted would. Default false: key order, as S3 lists.
   */
  readonly unorderedListings?: boolean;
}

/**
 * Named personalities, after what public reports say of stores users point S3 clients at (each
 * may have changed since; `latch doctor` tells what a store does today):
 * - 'ignores-if-none-match-on-put': Google Cloud Storage's XML API, Garage as of mid-2025;
 * - 'ignores-if-match-on-put': Google Cloud Storage's XML API;
 * - 'ignores-if-match-on-delete': MinIO (minio/minio#21677);
 * - 'no-conditional-writes': Backblaze B2 and Alibaba OSS, which answer 501;
 * - 'eventually-consistent': a Tigris "Global" bucket read without `X-Tigris-Consistent: true`
 *   (one second of stale reads here).
 */
export const S3_PERSONALITIES = {
  aws: {},
  'ignores-if-none-match-on-put': { putIfNoneMatch: 'ignore' },
  'ignores-if-match-on-put': { putIfMatch: 'ignore' },
  'ignores-if-match-on-delete': { deleteIfMatch: 'ignore' },
  'no-conditional-writes': {
    putIfNoneMatch: 'not-implemented',
    putIfMatch: 'not-implemented',
    deleteIfMatch: 'not-implemented',
  },
  'eventually-consistent': { staleReadsMs: 1000 },
} as const satisfies Record<string, S3Personality>;

export type S3PersonalityName = keyof typeof S3_PERSONALITIES;

/** The personality an option names or spells out, checked. */
export function resolvePersonality(option: S3PersonalityName | S3Personality | undefined): S3Personality {
  if (option === undefined) return {};
  if (typeof option === 'string') {
    const named: S3Personality | undefined = (S3_PERSONALITIES as Record<string, S3Personality>)[option];
    if (!named) {
      throw new Error(
        `startS3Server(): unknown personality ${JSON.stringify(option)}; use one of ${Object.keys(S3_PERSONALITIES).join(', ')}, or an object of S3Personality fields.`,
      );
    }
    return named;
  }
  const handlings = ['honour', 'ignore', 'not-implemented'];
  for (const field of ['putIfNoneMatch', 'putIfMatch', 'deleteIfMatch'] as const) {
    const value = option[field];
    if (value !== undefined && !handlings.includes(value)) {
      throw new Error(`startS3Server(): personality.${field} must be one of ${handlings.join(', ')}.`);
    }
  }
  const offset = option.clockOffsetMs;
  if (offset !== undefined && !Number.isFinite(offset)) {
    throw new Error('startS3Server(): personality.clockOffsetMs must be a finite number.');
  }
  const stale = option.staleReadsMs;
  if (stale !== undefined && !(Number.isFinite(stale) && stale >= 0)) {
    throw new Error('startS3Server(): personality.staleReadsMs must be a finite number >= 0.');
  }
  return option;
}
