import type { DelayBackoff } from './options.js';

/**
 * The pause before the next try of a job delayed `delaysSoFar` times: the ceiling doubles from
 * `baseMs` up to `maxMs`, and the pause is drawn from the upper half of it. Never near zero, so
 * contended jobs do not spin; randomised, so jobs that met the same holder do not return together.
 */
export function contentionDelayMs(
  delaysSoFar: number,
  backoff: Required<DelayBackoff>,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(delaysSoFar, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
