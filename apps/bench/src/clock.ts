/**
 * Milliseconds on the machine-wide monotonic clock. On Linux this is CLOCK_MONOTONIC, which
 * every process on the host shares, so hold intervals recorded in different worker
 * processes can be compared with each other (wall clocks could step under NTP).
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
