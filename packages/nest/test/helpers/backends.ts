import { S3Client } from '@aws-sdk/client-s3';
import { type LockStore, memoryStore, s3Store } from '@latch/core';
import { type S3Server, startS3Server } from '@latch/testing';

/** One store shared by every replica of a test, as one bucket is shared by every host. */
export interface Backend {
  store: LockStore;
  /** The S3 server, for backends that have one. */
  s3?: S3Server;
  stop(): Promise<void>;
}

export const backends = [
  {
    name: 'memory store',
    start: async (): Promise<Backend> => ({ store: memoryStore(), stop: async () => {} }),
  },
  {
    name: 'local S3 server',
    start: async (): Promise<Backend> => {
      const s3 = await startS3Server({ bucket: 'locks' });
      const client = new S3Client(s3.clientConfig());
      return {
        store: s3Store({ client, bucket: 'locks', prefix: 'locks/' }),
        s3,
        stop: async () => {
          client.destroy();
          await s3.stop();
        },
      };
    },
  },
];
