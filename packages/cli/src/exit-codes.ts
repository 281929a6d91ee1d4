/**
 * Exit codes of `latch` itself. Once `latch run` has started the command, the command's own
 * exit code is passed through instead (a command killed by a signal gives 128 + the signal's number).
 */
export const ExitCode = {
  ok: 0,
  /** Something unexpected went wrong (a bug in latch or its environment). */
  failure: 1,
  /** Bad command line or option value; nothing was sent to the store. */
  usage: 2,
  /** The lock stayed held by someone else for the whole --wait. */
  notAcquired: 3,
  /** `doctor`: the store failed a check locks rely on (do not lock there). */
  unsafeStore: 3,
  /** The store could not be used: unreachable, missing bucket or table, access denied, unreadable record. */
  storeError: 4,
  /** The lock was lost while held (`run`), or the handle no longer holds it (`release`). */
  lockLost: 5,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];
