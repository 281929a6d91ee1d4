import type { BackendEndpoints } from '../backend-endpoints.js';
import type { SubjectId } from './catalog.js';
import type { LockSubject } from './lock-subject.js';

/** Sets up one subject inside this process, loading only the library it needs. */
export async function openSubject(id: SubjectId, backends: BackendEndpoints): Promise<LockSubject> {
  switch (id) {
    case 'latch-memory':
      return (await import('./latch.js')).openLatch('memory', backends);
    case 'latch-s3':
      return (await import('./latch.js')).openLatch('s3', backends);
    case 'latch-dynamodb':
      return (await import('./latch.js')).openLatch('dynamodb', backends);
    case 'latch-s3-list':
      return (await import('./latch.js')).openLatch('s3-list', backends);
    case 's3-get-put':
      return (await import('./s3-get-put.js')).openS3GetPut(backends);
    case 'dynamodb-lock-client':
      return (await import('./dynamodb-lock-client.js')).openDynamodbLockClient(backends, {
        trustLocalTime: false,
      });
    case 'dynamodb-lock-client-trust':
      return (await import('./dynamodb-lock-client.js')).openDynamodbLockClient(backends, {
        trustLocalTime: true,
      });
    case 'deliveryhero':
      return (await import('./deliveryhero.js')).openDeliveryhero(backends, { trustLocalTime: false });
    case 'deliveryhero-trust':
      return (await import('./deliveryhero.js')).openDeliveryhero(backends, { trustLocalTime: true });
    case 'redlock':
      return (await import('./redlock.js')).openRedlock(backends);
  }
}
