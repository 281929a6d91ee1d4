/**
 * The S3 list strategy's object names and their order. Every attempt to take lock `name`
 * uploads one object named
 *
 *     <name>.<created>.<uuid>.<expires>
 *
 * `created` and `expires` are ms since epoch on the contender's wall clock (`expires` is
 * `never` for fail-closed locks), `uuid` is random per attempt. Listing `<name>.` and sorting
 * by (created, uuid) gives the queue; the first live contender holds the lock.
 */

/** One listed object of a lock. */
export interface ListEntry {
  objectKey: string;
  created: number;
  uuid: string;
  /** null = never expires (fail-closed). */
  expires: number | null;
}

/**
 * One contender: every listed object with the same (created, uuid). A renewal uploads a new
 * object with a later `expires` before deleting the old one, so for a moment both are listed.
 */
export interface ListContender {
  created: number;
  uuid: string;
  /** The latest expiry among its objects. */
  expires: number | null;
  objectKeys: string[];
}

/** Longest suffix appended to a lock name: '.' + created + '.' + uuid + '.' + expires. */
export const ENTRY_SUFFIX_BYTES = 1 + 16 + 1 + 36 + 1 + 16;

const NEVER = 'never';
const SUFFIX =
  /^(\d{1,16})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(\d{1,16}|never)$/;

/** The prefix to list for lock `name`. */
export function entryPrefix(name: string): string {
  return `${name}.`;
}

export function entryKey(name: string, created: number, uuid: string, expires: number | null): string {
  return `${entryPrefix(name)}${created}.${uuid}.${expires === null ? NEVER : expires}`;
}

/**
 * Parses a listed object key of lock `name`; undefined for anything else. Keys of a lock whose
 * name extends this one ("deploy.eu" when listing "deploy.") have one more dot-separated part
 * and so never parse as ours.
 */
export function parseEntry(name: string, objectKey: string): ListEntry | undefined {
  const prefix = entryPrefix(name);
  if (!objectKey.startsWith(prefix)) return undefined;
  const match = SUFFIX.exec(objectKey.slice(prefix.length));
  if (!match) return undefined;
  const created = Number(match[1]);
  const expires = match[3] === NEVER ? null : Number(match[3]);
  if (!Number.isSafeInteger(created) || (expires !== null && !Number.isSafeInteger(expires)))
    return undefined;
  return { objectKey, created, uuid: match[2]!, expires };
}

/**
 * The lock name and entry of any listed object key (the name is what precedes its last three
 * dot-separated parts); undefined for a key that is not a contender object.
 */
export function parseObjectKey(objectKey: string): { name: string; entry: ListEntry } | undefined {
  const parts = objectKey.split('.');
  if (parts.length < 4) return undefined;
  const name = parts.slice(0, -3).join('.');
  const entry = name === '' ? undefined : parseEntry(name, objectKey);
  return entry && { name, entry };
}

/** Groups entries by contender, in queue order: created, then uuid. */
export function contendersInOrder(entries: ListEntry[]): ListContender[] {
  const byId = new Map<string, ListContender>();
  for (const entry of entries) {
    const id = `${entry.created}.${entry.uuid}`;
    const seen = byId.get(id);
    if (!seen) {
      byId.set(id, {
        created: entry.created,
        uuid: entry.uuid,
        expires: entry.expires,
        objectKeys: [entry.objectKey],
      });
      continue;
    }
    seen.objectKeys.push(entry.objectKey);
    if (seen.expires !== null && (entry.expires === null || entry.expires > seen.expires)) {
      seen.expires = entry.expires;
    }
  }
  return [...byId.values()].sort((a, b) =>
    a.created !== b.created ? a.created - b.created : a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0,
  );
}

/** A contender's key counts until `expires + toleranceMs` on the reader's wall clock. */
export function isLive(contender: ListContender, now: number, toleranceMs: number): boolean {
  return contender.expires === null || contender.expires + toleranceMs >= now;
}

/** The object key carrying a contender's latest expiry. */
export function latestObjectKey(contender: ListContender): string {
  const suffix = `.${contender.expires === null ? NEVER : contender.expires}`;
  return contender.objectKeys.find((key) => key.endsWith(suffix)) ?? contender.objectKeys[0]!;
}
