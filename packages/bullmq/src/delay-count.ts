import type { Job } from 'bullmq';

/**
 * How many times this job already went back to the delayed set without using an attempt.
 *
 * Nothing extra is stored: BullMQ counts every start (`attemptsStarted`), every finished
 * attempt (`attemptsMade`) and every stall recovery (`stalledCounter`) atomically in the job
 * itself, so the starts that were none of these, less the current one, are the re-delays.
 * A processor's own `DelayedError` or a rate-limit move counts as a re-delay too.
 */
export function delaysSoFar(job: Job): number {
  const started = count(job.attemptsStarted);
  const made = count(job.attemptsMade);
  const stalled = count(job.stalledCounter);
  return Math.max(0, started - made - stalled - 1);
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
