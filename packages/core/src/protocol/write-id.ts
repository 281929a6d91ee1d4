// A writer is one store lease's author: a claim, a resume, or the receiving side of a written
// hand-over. Each write it sends carries `<writer>:<seq>`, so "is this record mine, and which of
// my writes made it?" is one comparison. Ids written by older clients have no writer prefix:
// they never match a writer, and those clients keep recognising their own ids exactly.

/** The separator between a writer and its sequence number; never part of a writer id. */
const SEPARATOR = ':';

/** The id the write number `seq` (1, 2, …) of `writer` carries. */
export function writeIdOf(writer: string, seq: number): string {
  return `${writer}${SEPARATOR}${seq}`;
}

/** The sequence number of `writeId` when `writer` wrote it; undefined for anyone else's id. */
export function seqOf(writeId: string, writer: string): number | undefined {
  if (writeId.length <= writer.length + 1 || !writeId.startsWith(writer)) return undefined;
  if (writeId[writer.length] !== SEPARATOR) return undefined;
  const digits = writeId.slice(writer.length + 1);
  if (!/^[1-9][0-9]{0,15}$/.test(digits)) return undefined;
  return Number(digits);
}

/** Whether `writer` can be used as a writer id (it must not contain the separator). */
export function isWriterId(writer: string): boolean {
  return writer.length > 0 && !writer.includes(SEPARATOR);
}
