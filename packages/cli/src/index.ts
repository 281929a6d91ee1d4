/** The latch command line, callable in process: `main(argv, env)` resolves with the exit code. */
export { parseDuration } from './duration.js';
export { ExitCode } from './exit-codes.js';
export { type MainOptions, main } from './main.js';
export { parseStoreUrl, type StoreUrl } from './store-url.js';
export { UsageError } from './usage-error.js';
