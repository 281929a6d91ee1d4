import { UsageError } from './usage-error.js';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;
// One or more <number><unit> parts: "90s", "15m", "1h30m", "1.5h", "500ms".
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/**
 * Parses a duration flag into milliseconds. A unit is required (a bare "30" could mean
 * seconds or milliseconds); only `0` may stand alone, and only where `allowZero` says so.
 */
export function parseDuration(flag: string, text: string, options: { allowZero?: boolean } = {}): number {
  const trimmed = text.trim();
  if (trimmed === '0' && options.allowZero) return 0;
  if (!WHOLE.test(trimmed)) {
    throw new UsageError(
      `${flag} must be a duration like 500ms, 90s, 15m, 1h or 1h30m, got ${JSON.stringify(text)}.`,
    );
  }
  let ms = 0;
  for (const [, amount, unit] of trimmed.matchAll(PART)) ms += Number(amount) * UNIT_MS[unit as Unit];
  ms = Math.round(ms);
  if (ms === 0 && !options.allowZero) {
    throw new UsageError(`${flag} must be longer than 0, got ${JSON.stringify(text)}.`);
  }
  if (!Number.isSafeInteger(ms)) throw new UsageError(`${flag} is too long: ${JSON.stringify(text)}.`);
  return ms;
}

/** The shortest readable form of a duration, for messages: 1h30m, 15m, 2s, 500ms. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return 'forever';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  let rest = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('');
}
