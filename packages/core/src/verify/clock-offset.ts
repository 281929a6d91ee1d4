import type { LockStore } from '../contract/lock-store.js';
import type { ResolvedClock } from '../shared/clock.js';
import type { ClockReading } from './store-verdict.js';

/** HTTP dates name whole seconds: the server's clock was somewhere in the second a `Date` names. */
const DATE_RESOLUTION_MS = 1000;

/**
 * The offset between the store's clock and `clock` (server minus local), from the `Date` of one
 * answer: the server stamped it somewhere between sending the request and its answer arriving,
 * within the second it names. Undefined when the store does not state its time.
 */
export async function readClock(
  store: LockStore,
  key: string,
  clock: ResolvedClock,
): Promise<ClockReading | undefined> {
  if (!store.serverTime) return undefined;
  const sentAt = clock.time.now();
  const startedAt = clock.time.monotonic();
  const serverDate = await store.serverTime(key);
  const roundTripMs = clock.time.monotonic() - startedAt;
  if (serverDate === undefined) return undefined;
  const offsetMs = {
    low: serverDate - (sentAt + roundTripMs),
    high: serverDate + DATE_RESOLUTION_MS - sentAt,
  };
  return judgeOffset(offsetMs, roundTripMs, clock);
}

/** Whether clocks this far apart break the clock mode's assumption, in words. */
export function judgeOffset(
  offsetMs: { low: number; high: number },
  roundTripMs: number,
  clock: Pick<ResolvedClock, 'mode' | 'toleranceMs'>,
): ClockReading {
  const { mode, toleranceMs } = clock;
  // Certainly beyond: the whole interval lies outside ±tolerance.
  const certainly = offsetMs.low > toleranceMs || offsetMs.high < -toleranceMs;
  const beyondTolerance = mode === 'trusted' && certainly;
  const range = `between ${Math.round(offsetMs.low)} and ${Math.round(offsetMs.high)} ms (server minus local; round trip ${Math.round(roundTripMs)} ms)`;
  const detail =
    mode === 'untrusted'
      ? `the store's clock is ${range}; the untrusted clock mode does not rely on clocks agreeing.`
      : beyondTolerance
        ? `the store's clock is ${range}, beyond clock.toleranceMs ${toleranceMs}: trusted clocks that disagree this much can let a lease be taken over while its holder still runs. Fix the clock (NTP), raise toleranceMs above the offset, or use clock: 'untrusted'.`
        : `the store's clock is ${range}, within what clock.toleranceMs ${toleranceMs} allows as far as one HTTP Date (whole seconds) can tell.`;
  return { offsetMs, roundTripMs, mode, toleranceMs, beyondTolerance, detail };
}
