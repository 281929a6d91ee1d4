/**
 * The version `latch --version` prints. Kept in step with package.json by the release script
 * (`pnpm version-packages`), and checked against it by test/version.test.ts.
 */
export const VERSION = '0.1.0';
