import type { BackendEndpoints } from '../backend-endpoints.js';
import type { BenchPlan } from '../plan.js';

/** What the parent side of every scenario needs. */
export interface ScenarioContext {
  backends: BackendEndpoints;
  plan: BenchPlan;
  /** Unique per bench run; prefixes every lock key. */
  runId: string;
}

/** Extra time a worker gets beyond its expected run before it is killed (process start, slow machine). */
export const WORKER_SLACK_MS = 60_000;

/** The first line of an error's message, for a results row. */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 300);
}
