/**
 * The fencing token a handle from `latch acquire` carries, or undefined when it cannot be read.
 * A handle is "latch1." followed by base64url JSON whose `t` is the acquisition's fencing token
 * (core's handle format; core exports only the key, keyOfHandle). Used only to tell a handle
 * released already from one whose lock moved on: when unsure, the caller keeps the failure.
 */
export function fencingTokenOfHandle(handle: string): number | undefined {
  if (!handle.startsWith('latch1.')) return undefined;
  try {
    const fields: unknown = JSON.parse(
      Buffer.from(handle.slice('latch1.'.length), 'base64url').toString('utf8'),
    );
    const token = (fields as { t?: unknown } | null)?.t;
    return Number.isSafeInteger(token) ? (token as number) : undefined;
  } catch {
    return undefined;
  }
}
