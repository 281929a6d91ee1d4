import type { PricedBackend } from '../prices.js';

export type SubjectId =
  | 'latch-memory'
  | 'latch-s3'
  | 'latch-dynamodb'
  | 's3-get-put'
  | 'dynamodb-lock-client'
  | 'dynamodb-lock-client-trust'
  | 'deliveryhero'
  | 'deliveryhero-trust'
  | 'redlock'
  | 'latch-s3-list';

/** What is benchmarked: a lock library with its settings, on one backend. */
export interface SubjectInfo {
  id: SubjectId;
  /** Short name for tables and the chart. */
  label: string;
  /** True for Latch itself, false for peers and baselines. */
  ours: boolean;
  backend: PricedBackend;
  /** The settings used, in words, for the README and results. */
  settings: string;
  /** The Latch subject a peer is compared with in the ratio columns. */
  comparedTo?: SubjectId;
  /** False when the lock does not renew held locks at all. */
  renews: boolean;
  /** False when the store lives inside one process (memory): contenders cannot span processes. */
  crossProcess: boolean;
  /** Why the semaphore scenario does not apply, when it does not (undefined: it does). */
  noSemaphore?: string;
}

/** Said of every peer in the semaphore scenario. */
const PEER_HAS_NO_SEMAPHORE = 'no semaphore (limit > 1) in the library';

const LATCH_DEFAULTS = 'LockClient defaults: leaseMs 30 000, heartbeat every 10 000 ms, pollMs 1000';

/** Every subject, in table order. The S3 list strategy comes last. */
export const SUBJECTS: readonly SubjectInfo[] = [
  {
    id: 'latch-memory',
    label: 'Latch memory (one client)',
    ours: true,
    backend: 'memory',
    // One client is alone on its keys here (the store lives in its process): turns, which only
    // make room for other clients, are off, as the core README advises for that case.
    settings: `memoryStore(); ${LATCH_DEFAULTS}; localTurnMs Infinity in the hand-off scenario (one client alone on its keys; the semaphore scenarios keep the default)`,
    renews: true,
    crossProcess: false,
  },
  {
    id: 'latch-s3',
    label: 'Latch S3',
    ours: true,
    backend: 's3',
    settings: `s3Store({ verify: false }) on the local S3 server with conditional writes (as on AWS: no probe); ${LATCH_DEFAULTS}`,
    renews: true,
    crossProcess: true,
  },
  {
    id: 'latch-dynamodb',
    label: 'Latch DynamoDB',
    ours: true,
    backend: 'dynamodb',
    settings: `dynamoStore({ verify: false }) on DynamoDB Local (as on AWS: no probe); ${LATCH_DEFAULTS}`,
    renews: true,
    crossProcess: true,
  },
  {
    id: 's3-get-put',
    label: 'S3 GET+PUT loop',
    ours: false,
    backend: 's3',
    comparedTo: 'latch-s3',
    settings:
      'baseline written here: GET the lock object, PUT If-Match / If-None-Match when free or expired, else poll every 50 ms; release = DELETE If-Match; 30 s lease, no renewal',
    renews: false,
    crossProcess: true,
    noSemaphore: PEER_HAS_NO_SEMAPHORE,
  },
  {
    id: 'dynamodb-lock-client',
    label: 'dynamodb-lock-client',
    ours: false,
    backend: 'dynamodb',
    comparedTo: 'latch-dynamodb',
    settings: 'FailOpen, leaseDurationMs 10 000, heartbeatPeriodMs 3000 (its README example), aws-sdk v2',
    renews: true,
    crossProcess: true,
    noSemaphore: PEER_HAS_NO_SEMAPHORE,
  },
  {
    id: 'dynamodb-lock-client-trust',
    label: 'dynamodb-lock-client trustLocalTime',
    ours: false,
    backend: 'dynamodb',
    comparedTo: 'latch-dynamodb',
    settings: 'FailOpen, leaseDurationMs 10 000, heartbeatPeriodMs 3000, trustLocalTime: true, aws-sdk v2',
    renews: true,
    crossProcess: true,
    noSemaphore: PEER_HAS_NO_SEMAPHORE,
  },
  {
    id: 'deliveryhero',
    label: '@deliveryhero/dynamodb-lock',
    ours: false,
    backend: 'dynamodb',
    comparedTo: 'latch-dynamodb',
    settings: 'defaults: leaseDurationInMs 20 000, prolongEveryMs 5000, trustLocalTime false',
    renews: true,
    crossProcess: true,
    noSemaphore: PEER_HAS_NO_SEMAPHORE,
  },
  {
    id: 'deliveryhero-trust',
    label: '@deliveryhero/dynamodb-lock trustLocalTime',
    ours: false,
    backend: 'dynamodb',
    comparedTo: 'latch-dynamodb',
    settings: 'defaults plus trustLocalTime: true, waitDurationInMs 50 (polls a held lock every 50 ms)',
    renews: true,
    crossProcess: true,
    noSemaphore: PEER_HAS_NO_SEMAPHORE,
  },
  {
    id: 'redlock',
    label: 'redlock (Redis)',
    ours: false,
    backend: 'redis',
    comparedTo: 'latch-dynamodb',
    settings:
      'redlock defaults (retryCount 10, retryDelay 200, retryJitter 100), one redis-server, using() with a 30 000 ms duration so it auto-extends',
    renews: true,
    crossProcess: true,
    noSemaphore: PEER_HAS_NO_SEMAPHORE,
  },
  {
    id: 'latch-s3-list',
    label: 'Latch S3 list strategy',
    ours: true,
    backend: 's3-list',
    settings: `s3ListStore() on a local S3 server without conditional writes; ${LATCH_DEFAULTS}`,
    renews: true,
    crossProcess: true,
    noSemaphore: 's3ListStore() refuses limit > 1',
  },
];

export function subjectInfo(id: SubjectId): SubjectInfo {
  const info = SUBJECTS.find((subject) => subject.id === id);
  if (!info) throw new Error(`Unknown subject "${id}". Known: ${SUBJECTS.map((s) => s.id).join(', ')}.`);
  return info;
}
