import type { WriterState } from './writer-state.js';

/**
 * The named phases of a writer. A phase is not stored: it follows from what the writer wants
 * (its goal), whether it holds a lease, and its one write in flight, so it can never disagree
 * with them. ARCHITECTURE.md has the transitions between them.
 */
export const PHASES = [
  'waiting',
  'checking',
  'claiming',
  'claimUnknown',
  'held',
  'writing',
  'writeUnknown',
  'releasing',
  'handingOver',
  'givingBack',
  'ended',
] as const;

export type WriterPhase = (typeof PHASES)[number];

export function phaseOf(state: WriterState): WriterPhase {
  if (state.end !== null) return 'ended';
  const { goal, pending } = state;
  const unknown = pending !== null && pending.status !== 'sent' && pending.status !== 'refused';
  switch (goal.kind) {
    case 'acquire':
      // A claim the store refused: waiting for the retry time before the next one.
      if (pending?.status === 'refused') return 'waiting';
      if (pending) return unknown ? 'claimUnknown' : 'claiming';
      return state.reading ? 'checking' : 'waiting';
    case 'hold':
      if (pending) return unknown ? 'writeUnknown' : 'writing';
      return 'held';
    case 'release':
      return 'releasing';
    case 'handOver':
      return 'handingOver';
    case 'giveBack':
      return 'givingBack';
  }
}
