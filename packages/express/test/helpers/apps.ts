import { LockClient, type LockStore } from '@latch/core';
import express, { type Express, type RequestHandler } from 'express';
import { lockErrorHandler } from '../../src/index.js';

/** One replica's lock client; short polls keep cross-replica tests quick. */
export function replicaClient(store: LockStore, owner: string): LockClient {
  return new LockClient({ store, owner, pollMs: 50 });
}

/** An Express 5 app with `GET path` guarded by `guard`, and the standard Latch error answers. */
export function guardedApp(guard: RequestHandler, handler: RequestHandler, path = '/items/:id'): Express {
  const app = express();
  app.get(path, guard, handler);
  app.use(lockErrorHandler());
  return app;
}

/** Counts handlers running at once, and the fencing tokens in the order handlers started. */
export class Overlap {
  active = 0;
  maxActive = 0;
  readonly tokens: number[] = [];

  enter(token: number): void {
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    this.tokens.push(token);
  }

  leave(): void {
    this.active--;
  }
}
