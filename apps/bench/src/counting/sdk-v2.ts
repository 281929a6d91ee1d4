import type { RequestTally } from './request-tally.js';

/** The part of an AWS SDK v2 service object this counter uses. */
interface ServiceLike {
  customizeRequests(callback: (request: RequestLike) => void): void;
}
interface RequestLike {
  operation: string;
  on(event: 'send', listener: () => void): unknown;
}

/**
 * Counts every HTTP attempt an AWS SDK v2 service sends: a request emits 'send' once per
 * attempt, retries included. Operation names are capitalised to match SDK v3's ('GetItem').
 */
export function countSdkV2Requests(service: object, tally: RequestTally): void {
  // customizeRequests is part of the v2 service API but missing from its type declarations.
  (service as ServiceLike).customizeRequests((request) => {
    request.on('send', () =>
      tally.add(request.operation.charAt(0).toUpperCase() + request.operation.slice(1)),
    );
  });
}
