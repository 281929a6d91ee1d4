/**
 * How many fencing tokens a hand-over reserves above the one it gives, and a renewal keeps in
 * reserve: the lock can then pass among the client's own callers this many times with no
 * write. Tokens only need to rise and never repeat; skipped ones cost nothing.
 */
export const RESERVED_TOKENS = 1024;

/** The record token a holder on token `own` writes in a record whose token is `top`: half the reserve left at least. */
export function reserveAhead(own: number, top: number): number {
  return top - own >= RESERVED_TOKENS / 2 ? top : own + RESERVED_TOKENS;
}
