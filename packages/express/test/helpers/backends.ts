import { S3Client } from '@aws-sdk/client-s3';
import { type LockStore, memoryStore, s3Store } from '@latch/core';
import { type S3Server, startS3Server } from '@latch/testing';

/** A lock store on a real backend, shared by the replicas of one test. */
export interface Backend {
  store: LockStore;
  /** The local S3 server behind an S3 backend. */
  s3?: S3Server;
  stop(): Promise<void>;
}

export const PREFIX = 'locks/';

/** The backends every behaviour is tested on: in-process memory, and S3 over HTTP. */
export const backends: Array<{ name: string; start: () => Promise<Backend> }> = [
  { name: 'memory store', start: async () => ({ store: memoryStore(), stop: async () => {} }) },
  {
    name: 'S3 store',
    start: async () => {
      const s3 = await startS3Server({ bucket: 'locks' });
      const client = new S3Client(s3.clientConfig());
      return {
        store: s3Store({ client, bucket: 'locks', prefix: PREFIX }),
        s3,
        stop: async () => {
          client.destroy();
          await s3.stop();
        },
      };
    },
  },
];

/** Wraps a store to count release writes (a record written free, or deleted) per key. */
export function countReleases(inner: LockStore): { store: LockStore; releases: (key: string) => number } {
  const counts = new Map<string, number>();
  const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  const store: LockStore = {
    kind: inner.kind,
    maxRecordBytes: inner.maxRecordBytes,
    checkKey: (key) => inner.checkKey(key),
    recordBytes: (record) => inner.recordBytes(record),
    read: (key) => inner.read(key),
    write: (key, record, condition) => {
      if (record.holder === null) count(key);
      return inner.write(key, record, condition);
    },
    delete: (key, version) => {
      count(key);
      return inner.delete(key, version);
    },
  };
  if (inner.claim) store.claim = inner.claim.bind(inner);
  return { store, releases: (key) => counts.get(key) ?? 0 };
}
