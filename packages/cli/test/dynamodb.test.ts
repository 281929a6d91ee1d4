import { describe } from 'vitest';
import { startDynamoBackend, useBackend } from './helpers/backends.js';
import { acquireReleaseScenarios } from './scenarios/acquire-release-scenarios.js';
import { limitScenarios } from './scenarios/limit-scenarios.js';
import { forceReleaseScenarios, listingScenarios, watchScenarios } from './scenarios/operator-scenarios.js';
import { runScenarios } from './scenarios/run-scenarios.js';

describe('the built CLI against DynamoDB (dynamodb://)', () => {
  const backend = useBackend(startDynamoBackend);
  runScenarios(backend);
  acquireReleaseScenarios(backend);
  limitScenarios(backend);
  forceReleaseScenarios(backend);
  listingScenarios(backend);
  watchScenarios(backend);
});
