import { mergeConfig } from 'vitest/config';
import base from './vitest.config.ts';

// `pnpm test:chaos`: only the reliability suite, with the default reporter so its summary table
// is the last thing printed. The normal `vitest run` runs these files too, with every other test.
const config = mergeConfig(base, {});
// mergeConfig concatenates arrays; these must replace the base values, not extend them.
config.test = { ...config.test, include: ['test/chaos/**/*.test.ts'], reporters: ['default'] };

export default config;
