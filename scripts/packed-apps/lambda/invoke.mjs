// Invokes a bundled Lambda handler as the Lambda runtime would: loads the bundle from its own
// folder (which has no node_modules of its own), then calls `handler(event, context)` for each
// event in turn (the first on a cold start, the next ones warm), with a context whose remaining
// time counts down from the given ms. Prints one `RESULT {...}` or `ERROR {...}` line each.
//   node invoke.mjs <bundle file> '<JSON array of events>' <remaining ms>
import { pathToFileURL } from 'node:url';

const [bundle, events, remaining] = process.argv.slice(2);
const remainingMs = Number(remaining);
const { handler } = await import(pathToFileURL(bundle).href);
for (const event of JSON.parse(events)) {
  const deadline = Date.now() + remainingMs;
  const context = { getRemainingTimeInMillis: () => deadline - Date.now() };
  try {
    const result = await handler(event, context);
    console.log(`RESULT ${JSON.stringify({ event, result })}`);
  } catch (error) {
    const { name, code, message } = error ?? {};
    console.log(`ERROR ${JSON.stringify({ event, name, code, message })}`);
  }
}
