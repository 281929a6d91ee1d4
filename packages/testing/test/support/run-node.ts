import { type ChildProcess, spawn } from 'node:child_process';

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A Node child process whose output is collected; `finished` resolves when it has exited. */
export interface NodeChild {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line matching `pattern` (rejects if the process exits first). */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  finished: Promise<Finished>;
}

export function runNode(args: string[], env: NodeJS.ProcessEnv = process.env): NodeChild {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const finished = new Promise<Finished>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout: out, stderr: err })),
  );
  const line = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => done(new Error(`no line matching ${pattern} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const check = () => {
        const found = out.split('\n').find((l) => pattern.test(l));
        if (found !== undefined) done(undefined, found);
      };
      const exited = () => done(new Error(`process exited before printing ${pattern}:\n${out}\n${err}`));
      function done(error?: Error, value?: string) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        child.off('close', exited);
        if (error) reject(error);
        else resolve(value!);
      }
      child.stdout.on('data', check);
      child.once('close', exited);
      check();
    });
  return { child, stdout: () => out, stderr: () => err, line, finished };
}
