import { connect } from 'node:net';

/** A decoded RESP2 reply; server error replies (`-ERR ...`) become `Error` values. */
export type RespValue = string | number | null | Error | RespValue[];

/**
 * Sends commands to a Redis server over one short-lived TCP connection and returns one reply per
 * command. Just enough RESP for readiness probes and the self-check — no client library needed.
 */
export function redisCommands(
  port: number,
  commands: string[][],
  { host = '127.0.0.1', timeoutMs = 2_000 }: { host?: string; timeoutMs?: number } = {},
): Promise<RespValue[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let buffer = Buffer.alloc(0);
    const replies: RespValue[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`Redis: no answer within ${timeoutMs} ms`)));
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('Redis: connection closed before all replies arrived')));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      try {
        for (let parsed = parseReply(buffer, 0); parsed; parsed = parseReply(buffer, 0)) {
          replies.push(parsed.value);
          buffer = buffer.subarray(parsed.end);
        }
      } catch (error) {
        socket.destroy(error as Error);
        return;
      }
      if (replies.length >= commands.length) {
        socket.end();
        resolve(replies);
      }
    });
    socket.write(commands.map(encodeCommand).join(''));
  });
}

function encodeCommand(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** Parses one reply starting at `start`; undefined when the buffer does not hold a complete one yet. */
function parseReply(buf: Buffer, start: number): { value: RespValue; end: number } | undefined {
  const lineEnd = buf.indexOf('\r\n', start);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buf[start]!);
  const line = buf.toString('utf8', start + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new Error(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buf.length < next + length + 2) return undefined;
      return { value: buf.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let offset = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, offset);
        if (!item) return undefined;
        items.push(item.value);
        offset = item.end;
      }
      return { value: items, end: offset };
    }
    default:
      throw new Error(`Redis: unexpected reply type "${type}"`);
  }
}
