import { pathToFileURL } from 'node:url';

/** This module's own URL in the CommonJS build; own-url.ts is the ES module build's. */
export const ownUrl: string = pathToFileURL(__filename).href;
