import type { Lock } from '@latch/core';

// Declaration merging: every Express `Request` gains an optional `lock`, set by lock() on the
// routes it guards. Express's own types (v4 and v5) build `Request` on this global interface.
declare global {
  namespace Express {
    interface Request {
      /**
       * The lock lock() holds for this request, released when the response ends. Pass
       * `lock.signal` to downstream calls (it aborts if the lock is lost mid-request) and
       * `lock.fencingToken` to the writes it protects.
       */
      lock?: Lock;
    }
  }
}
