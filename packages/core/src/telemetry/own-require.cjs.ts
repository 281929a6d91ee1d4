/** The CommonJS build's own `require`; own-require.ts is the ES module build's. */
export const ownRequire: NodeJS.Require = require;
