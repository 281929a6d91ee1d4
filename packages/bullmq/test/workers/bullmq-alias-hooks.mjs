// Module resolution hooks installed by bullmq-alias.mjs: `bullmq` and `bullmq/<path>` resolve to
// the same path under the alias package instead. Synchronous, so that they serve both
// module.registerHooks() and module.register().
let target;
let parentURL;

export function initialize(data) {
  ({ target, parentURL } = data);
}

export function resolve(specifier, context, nextResolve) {
  const match = /^bullmq(?=\/|$)(.*)$/.exec(specifier);
  if (!match) return nextResolve(specifier, context);
  return nextResolve(`${target}${match[1]}`, { ...context, parentURL });
}
