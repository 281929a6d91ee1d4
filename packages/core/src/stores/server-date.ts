// The HTTP `Date` of an SDK command's answer: the store's own clock, for verifyStore's clock check.

type Handler = (args: unknown) => Promise<unknown>;
interface CommandWithStack {
  middlewareStack?: {
    add?: (middleware: (next: Handler) => Handler, options: Record<string, unknown>) => void;
  };
}

/**
 * Adds to `command` a recorder of its last answer's `Date` header. It sits innermost (deserialize
 * step, low priority), around the HTTP handler itself, so it sees the raw answer even when the
 * SDK then turns it into an error (a 404 of a key that is gone).
 */
export function recordServerDate<C>(command: C): { command: C; date(): number | undefined } {
  let date: number | undefined;
  const stack = (command as CommandWithStack).middlewareStack;
  stack?.add?.(
    (next) => async (args) => {
      const result = (await next(args)) as { response?: { headers?: Record<string, string | undefined> } };
      const header = result.response?.headers?.date ?? result.response?.headers?.Date;
      const parsed = header === undefined ? Number.NaN : Date.parse(header);
      date = Number.isNaN(parsed) ? undefined : parsed;
      return result;
    },
    { step: 'deserialize', priority: 'low', name: 'latchServerDate' },
  );
  return { command, date: () => date };
}
