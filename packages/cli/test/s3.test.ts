import { afterAll, beforeAll, describe } from 'vitest';
import { type Backend, startS3Backend } from './helpers/backends.js';
import { acquireReleaseScenarios, githubAndHandleScenarios } from './scenarios/acquire-release-scenarios.js';
import { runScenarios } from './scenarios/run-scenarios.js';

describe('the built CLI against S3 (s3://)', () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await startS3Backend();
  });
  afterAll(async () => {
    await backend?.stop();
  });

  runScenarios(() => backend);
  acquireReleaseScenarios(() => backend);
  githubAndHandleScenarios(() => backend);
});
