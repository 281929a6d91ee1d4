import type { LockStore } from '@latch/core';
import type { INestApplication, LoggerService, ModuleMetadata } from '@nestjs/common';
import { afterEach, beforeEach } from 'vitest';
import type { Backend } from './backends.js';
import { startApp } from './nest.js';

/** Nest applications of one test that share a backend's store, as replicas share a bucket. */
export interface Replicas {
  /** The store of this test's backend. */
  readonly store: LockStore;
  /** Starts an application (silent unless given a logger); it is closed after the test unless `stop` closed it before. */
  start(metadata: ModuleMetadata, logger?: LoggerService): Promise<INestApplication>;
  /** Closes one application during the test, as when a replica goes down. */
  stop(app: INestApplication): Promise<void>;
}

/**
 * For the tests of one describe block: starts a fresh backend before each test, and after it
 * closes the applications still running, then the backend.
 */
export function replicasOn(start: () => Promise<Backend>): Replicas {
  let backend: Backend | undefined;
  const running = new Set<INestApplication>();
  beforeEach(async () => {
    backend = await start();
  });
  afterEach(async () => {
    await Promise.all([...running].map((app) => app.close()));
    running.clear();
    await backend?.stop();
  });
  return {
    get store() {
      if (!backend) throw new Error('replicasOn(...).store is only there while a test runs');
      return backend.store;
    },
    async start(metadata, logger) {
      const app = await startApp(metadata, logger);
      running.add(app);
      return app;
    },
    async stop(app) {
      running.delete(app);
      await app.close();
    },
  };
}
