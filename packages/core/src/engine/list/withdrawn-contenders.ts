import type { Scheduler } from '../../shared/scheduler.js';
import type { ListBucket } from './list-bucket.js';
import { parseEntry } from './list-entries.js';

/**
 * How long after we gave it up an upload whose answer never came is deleted again in the
 * background. S3 applies a request while it is being served; one served later than this after
 * its client gave up is the window the README names.
 */
export const LATE_UPLOAD_HORIZON_MS = 10 * 60_000;
const FIRST_SWEEP_MS = 1_000;
const LONGEST_SWEEP_GAP_MS = 60_000;
/** Contenders remembered at most (the oldest are forgotten first). */
const REMEMBERED = 1_000;

/**
 * Contenders of ours that are over: an attempt that did not win (withdrawn, lost, failed), or a
 * lease that was released or lost. We never upload an object of theirs again, so any object of
 * theirs is nobody's: a listing of this client leaves it out (and the engine deletes it), so
 * that it never blocks this client. An upload of theirs whose outcome was unknown may still
 * land after we deleted it; other clients cannot tell it from a holder, so it is deleted again
 * in the background, at growing gaps, for LATE_UPLOAD_HORIZON_MS or until it has expired.
 */
export class WithdrawnContenders {
  /** Contender uuid → monotonic time until which it is remembered. */
  private readonly until = new Map<string, number>();

  constructor(
    private readonly bucket: ListBucket,
    private readonly time: Scheduler,
    private readonly toleranceMs: number,
  ) {}

  /** Our contender `uuid` of lock `name` is over; `unsure` are its uploads that may still land. */
  withdraw(name: string, uuid: string, unsure: Iterable<string>): void {
    const until = this.time.monotonic() + LATE_UPLOAD_HORIZON_MS;
    this.until.delete(uuid);
    this.until.set(uuid, until);
    if (this.until.size > REMEMBERED) {
      const oldest = this.until.keys().next().value;
      if (oldest !== undefined) this.until.delete(oldest);
    }
    for (const objectKey of unsure) {
      const expires = parseEntry(name, objectKey)?.expires ?? null;
      // Once expired on every clock an object blocks nobody: no need to delete it after that.
      const harmlessIn =
        expires === null ? Number.POSITIVE_INFINITY : expires + this.toleranceMs - this.time.now();
      this.sweep(
        objectKey,
        this.time.monotonic() + Math.min(LATE_UPLOAD_HORIZON_MS, harmlessIn),
        FIRST_SWEEP_MS,
      );
    }
  }

  /** True when `uuid` is a contender of ours that is over. */
  has(uuid: string): boolean {
    const until = this.until.get(uuid);
    if (until === undefined) return false;
    if (this.time.monotonic() <= until) return true;
    this.until.delete(uuid);
    return false;
  }

  /** Deletes `objectKey` after `gap`, and again at growing gaps until `until`; never keeps the process alive. */
  private sweep(objectKey: string, until: number, gap: number): void {
    if (this.time.monotonic() + gap > until) return;
    this.time.setTimer(() => {
      void this.bucket
        .delete(objectKey)
        .catch(() => undefined) // tried again at the next sweep
        .finally(() => this.sweep(objectKey, until, Math.min(2 * gap, LONGEST_SWEEP_GAP_MS)));
    }, gap);
  }
}
