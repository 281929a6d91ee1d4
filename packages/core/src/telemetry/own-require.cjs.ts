/** The CommonJS build's `require`, from where @latch/core is installed; own-require.ts is the ES module build's. */
export function ownRequire(id: string): unknown {
  return require(id);
}
