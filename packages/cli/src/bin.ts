#!/usr/bin/env node
import { main } from './main.js';

// The command latch runs gets the environment exactly as latch got it.
const env = { ...process.env };
// The AWS SDK's multi-line notice about future Node versions would bury latch's one-line
// messages; set AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=false to see it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Exit explicitly: idle SDK sockets must not keep a finished command alive.
process.exit(await main(process.argv.slice(2), env));
