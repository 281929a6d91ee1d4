import { afterAll, beforeAll, describe } from 'vitest';
import { type Backend, startDynamoBackend } from './helpers/backends.js';
import { acquireReleaseScenarios } from './scenarios/acquire-release-scenarios.js';
import { runScenarios } from './scenarios/run-scenarios.js';

describe('the built CLI against DynamoDB (dynamodb://)', () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await startDynamoBackend();
  });
  afterAll(async () => {
    await backend?.stop();
  });

  runScenarios(() => backend);
  acquireReleaseScenarios(() => backend);
});
