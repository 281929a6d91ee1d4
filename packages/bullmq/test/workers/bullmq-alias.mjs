// Preloaded (`node --import`) into the worker processes of a project whose BullMQ is an npm alias
// (LATCH_TEST_BULLMQ_PACKAGE, e.g. `bullmq6`): every `bullmq` import in the process, the worker
// script's and the built @latch/bullmq's alike, resolves to that package, as vitest's
// resolve.alias does for the test process itself.
import * as nodeModule from 'node:module';
import { initialize, resolve } from './bullmq-alias-hooks.mjs';

const target = process.env.LATCH_TEST_BULLMQ_PACKAGE;
if (!target) throw new Error('bullmq-alias.mjs needs LATCH_TEST_BULLMQ_PACKAGE, e.g. bullmq6');
// Resolved from this package, where the alias is installed, whoever imports `bullmq`.
const data = { target, parentURL: new URL('../../package.json', import.meta.url).href };

if (typeof nodeModule.registerHooks === 'function') {
  // In-thread hooks (Node 22.15+), which module.register() is deprecated in favour of.
  initialize(data);
  nodeModule.registerHooks({ resolve });
} else {
  // Node 20: off-thread hooks, run in their own copy of the hooks module.
  nodeModule.register('./bullmq-alias-hooks.mjs', import.meta.url, { data });
}
