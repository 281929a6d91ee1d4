// `@latch/core/http`: what HTTP adapters (Express, Nest, your own) need to answer lock errors
// the same way: the status, headers and RFC 9457 body for each error, and a log entry for a
// store failure.
export {
  type LockHttpAnswer,
  type LockHttpOptions,
  type LockStoreLogEntry,
  lockErrorToHttp,
  lockStoreLogEntry,
  type ProblemDetails,
} from './http/http-problem.js';
