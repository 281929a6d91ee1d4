import type { IncomingHttpHeaders } from 'node:http';

/** One request header as a string (Node gives arrays for a few repeatable ones; take the first). */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
