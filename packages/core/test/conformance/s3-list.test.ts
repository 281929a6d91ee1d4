import { randomUUID } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startS3Server } from '@latch/testing';
import { describeLockConformance } from '@latch/testing/conformance';
import * as latch from '../../src/index.js';
import { s3ListStore } from '../../src/index.js';

// A short settle keeps the suite's short leases (300 ms and up) usable; the default is 500 ms.
const SETTLE_MS = 50;

describeLockConformance({
  latch,
  name: 'the S3 list strategy (local S3 server without conditional writes)',
  start: async () => {
    const server = await startS3Server({ bucket: 'locks', conditionalWrites: false });
    const client = new S3Client(server.clientConfig());
    const store = s3ListStore({ client, bucket: 'locks', prefix: 'latch/', settleMs: SETTLE_MS });
    return {
      store: () => store,
      breakWrites: () => {
        const fault = server.faults.internalError({ op: ['PutObject', 'DeleteObject'] });
        return () => fault.remove();
      },
      corrupt: async (key) => {
        // A well-named, live contender object whose body is not a contender.
        const now = Date.now();
        await client.send(
          new PutObjectCommand({
            Bucket: 'locks',
            Key: `latch/${key}.${now}.${randomUUID()}.${now + 60_000}`,
            Body: '{"latch":"latch-list/1","owner":',
          }),
        );
      },
      stop: async () => {
        client.destroy();
        await server.stop();
      },
    };
  },
  mutexRounds: 8,
  limitations: {
    data: 'the list strategy keeps no record to store data in',
    consecutiveTokens: "tokens are the winner's created time in ms",
    resume: 'without compare-and-swap the first process could keep renewing the same lease',
    untrustedClock: 'order and expiry are wall-clock times in object names',
    takeoverTrace: 'a takeover leaves no record once its object is deleted',
    newHolderInLoss: "a force-released holder notices its deleted object before anyone else's",
    semaphores: 'a semaphore keeps every holder in one record, which needs compare-and-swap',
    listFree: 'a released lock leaves no object, and an expired one is not a holder any more',
  },
});
