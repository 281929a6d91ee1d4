import { afterAll, beforeAll, describe } from 'vitest';
import { type Backend, startS3ListBackend } from './helpers/backends.js';
import { acquireReleaseScenarios } from './scenarios/acquire-release-scenarios.js';
import { runScenarios } from './scenarios/run-scenarios.js';

describe('the built CLI against S3 without conditional writes (s3+list://)', () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await startS3ListBackend();
  });
  afterAll(async () => {
    await backend?.stop();
  });

  runScenarios(() => backend);
  acquireReleaseScenarios(() => backend);
});
