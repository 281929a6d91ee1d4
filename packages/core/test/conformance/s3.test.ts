import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startS3Server } from '@latch/testing';
import { describeLockConformance } from '@latch/testing/conformance';
import * as latch from '../../src/index.js';
import { s3Store } from '../../src/index.js';

describeLockConformance({
  latch,
  name: 'the S3 store (local S3 server with conditional writes)',
  start: async () => {
    const server = await startS3Server({ bucket: 'locks' });
    const client = new S3Client(server.clientConfig());
    const store = s3Store({ client, bucket: 'locks', prefix: 'latch/' });
    return {
      store: () => store,
      listRequests: () => server.requestLog.filter((entry) => entry.op === 'ListObjectsV2').length,
      breakWrites: () => {
        const fault = server.faults.internalError({ op: ['PutObject', 'DeleteObject'] });
        return () => fault.remove();
      },
      corrupt: async (key) => {
        await client.send(
          new PutObjectCommand({ Bucket: 'locks', Key: `latch/${key}`, Body: '{"latch":1,"token":' }),
        );
      },
      stop: async () => {
        client.destroy();
        await server.stop();
      },
    };
  },
  // ListObjectsV2 answers at most 1,000 keys a page.
  listPagingLocks: 1001,
});
