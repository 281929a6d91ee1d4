import { describe } from 'vitest';
import { startS3ListBackend, useBackend } from './helpers/backends.js';
import { acquireReleaseScenarios } from './scenarios/acquire-release-scenarios.js';
import { forceReleaseScenarios, watchScenarios } from './scenarios/operator-scenarios.js';
import { runScenarios } from './scenarios/run-scenarios.js';

describe('the built CLI against S3 without conditional writes (s3+list://)', () => {
  const backend = useBackend(startS3ListBackend);
  runScenarios(backend);
  acquireReleaseScenarios(backend);
  forceReleaseScenarios(backend);
  watchScenarios(backend);
});
