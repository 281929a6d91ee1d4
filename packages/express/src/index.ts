import './request-lock.js';

export { type LockMiddleware, lock } from './lock-middleware.js';
export type { LockedHandler, LockMiddlewareOptions } from './options.js';
export { type LockErrorHandlerOptions, lockErrorHandler, type StoreErrorHook } from './problem-response.js';
