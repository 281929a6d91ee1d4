import type { VersionedRecord } from '../../contract/lock-record.js';
import { seqOf } from '../../protocol/write-id.js';
import type { RecordView } from '../../protocol/writer-state.js';
import { holdersOf } from './slot-records.js';

/**
 * What a stored record shows to one writer of the protocol state machine (src/protocol): the
 * same reading for a lock and a semaphore, since both are a list of holder entries. An entry is
 * the writer's own when it names the writer's acquisition (`lockId`) and its write id has the
 * writer's prefix: a hand-over naming the acquisition, written by another writer, is not, and
 * neither is any id an older client wrote (no prefix). `claimable` is the caller's judgement:
 * it depends on this client's clock mode and on how long it has watched the record.
 *
 * A writer that takes an acquisition over (a resume) and has not written yet passes `resumed`:
 * the acquisition's entry is then its own (seq 0, the token it takes over) while the entry keeps
 * the token it had when the takeover began, whoever wrote it last. Another holder of a semaphore
 * writing its own slot meanwhile (or the old process renewing) moves the record on, and the
 * takeover must try again on the new version instead of ending.
 */
export function writerView(
  current: VersionedRecord | null,
  writer: string,
  lockId: string,
  claimable: boolean,
  resumed?: { readonly entryToken: number; readonly token: number },
): RecordView {
  if (!current) return { version: null, token: 0, lastSeq: undefined, own: undefined, claimable: true };
  const { record } = current;
  const entry = holdersOf(record).find((holder) => holder.lockId === lockId);
  const seq = entry === undefined ? undefined : seqOf(entry.writeId, writer);
  const adopted = seq === undefined && entry !== undefined && entry.token === resumed?.entryToken;
  return {
    version: current.version,
    token: record.token,
    lastSeq: seqOf(record.writeId, writer),
    own:
      entry !== undefined && seq !== undefined
        ? { seq, token: entry.token }
        : adopted && resumed
          ? { seq: 0, token: resumed.token }
          : undefined,
    claimable,
  };
}
