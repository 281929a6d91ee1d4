import type { Env } from './aws-settings.js';

/**
 * Defaults CI users expect inside GitHub Actions: the lock is named after the workflow and
 * job ("deploy/production" style, one run of that job at a time), and the context says
 * which run holds it, with a link, so a waiting job's log points at the blocking run.
 */
export function defaultLockName(env: Env): string | undefined {
  const parts = [env.GITHUB_WORKFLOW, env.GITHUB_JOB].filter((part): part is string => Boolean(part));
  return parts.length > 0 ? parts.join('/') : undefined;
}

export function defaultContext(env: Env): string | undefined {
  const runNumber = env.GITHUB_RUN_NUMBER;
  const runId = env.GITHUB_RUN_ID;
  if (!runNumber && !runId) return undefined;
  const run = runNumber ? `run #${runNumber}` : `run ${runId}`;
  const what = [env.GITHUB_WORKFLOW, run, env.GITHUB_JOB ? `job ${env.GITHUB_JOB}` : undefined]
    .filter(Boolean)
    .join(' ');
  const link =
    env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && runId
      ? ` ${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${runId}`
      : '';
  return what + link;
}
