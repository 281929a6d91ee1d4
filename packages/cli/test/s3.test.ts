import { describe } from 'vitest';
import { startS3Backend, useBackend } from './helpers/backends.js';
import { acquireReleaseScenarios, githubAndHandleScenarios } from './scenarios/acquire-release-scenarios.js';
import { limitScenarios } from './scenarios/limit-scenarios.js';
import {
  forceReleaseScenarios,
  listingFailureScenarios,
  listingScenarios,
  watchScenarios,
} from './scenarios/operator-scenarios.js';
import { runScenarios } from './scenarios/run-scenarios.js';

describe('the built CLI against S3 (s3://)', () => {
  const backend = useBackend(startS3Backend);
  runScenarios(backend);
  acquireReleaseScenarios(backend);
  limitScenarios(backend);
  githubAndHandleScenarios(backend);
  forceReleaseScenarios(backend);
  listingScenarios(backend);
  watchScenarios(backend);
  listingFailureScenarios(backend);
});
