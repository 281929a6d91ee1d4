// Just enough typing for the peer libraries the bench drives: dynamodb-lock-client ships
// none, and redlock's own types are not reachable through its package "exports".

declare module 'dynamodb-lock-client' {
  interface FailOpenConfig {
    dynamodb: unknown;
    lockTable: string;
    partitionKey: string;
    leaseDurationMs: number;
    heartbeatPeriodMs?: number;
    trustLocalTime?: boolean;
    retryCount?: number;
    owner?: string;
  }
  class FailOpen {
    constructor(config: FailOpenConfig);
    // biome-ignore lint/suspicious/noExplicitAny: the lock type is declared where it is used
    acquireLock(id: string, callback: (error: any, lock: any) => void): void;
  }
  const DynamoDBLockClient: { FailOpen: typeof FailOpen };
  export default DynamoDBLockClient;
}

declare module 'redlock' {
  import { EventEmitter } from 'node:events';
  import type { Redis } from 'ioredis';

  export interface Settings {
    driftFactor?: number;
    retryCount?: number;
    retryDelay?: number;
    retryJitter?: number;
    automaticExtensionThreshold?: number;
  }
  export class ExecutionError extends Error {}
  export default class Redlock extends EventEmitter {
    constructor(clients: Iterable<Redis>, settings?: Settings);
    using<T>(resources: string[], duration: number, routine: (signal: AbortSignal) => Promise<T>): Promise<T>;
    quit(): Promise<void>;
  }
}
