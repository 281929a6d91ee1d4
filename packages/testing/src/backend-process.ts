import { type ChildProcess, spawn } from 'node:child_process';
import { stopChild, trackChild } from './child-process-registry.js';
import { findFreePort } from './free-port.js';
import { waitUntilReady } from './wait-until-ready.js';

/** How to run one local backend binary (DynamoDB Local's JVM, redis-server) and tell when it is ready. */
export interface BackendProcessSpec {
  /** Human name used in errors, e.g. "DynamoDB Local". */
  name: string;
  command: string;
  args: (port: number) => string[];
  cwd?: string;
  /** Fixed port; when omitted a free one is picked (and re-picked if another process grabs it first). */
  port?: number;
  /** One readiness attempt against the port; must time out on its own. */
  probe: (port: number) => Promise<boolean>;
  startupTimeoutMs: number;
  /** Appended to the error when `command` cannot be executed (how to install it). */
  missingHint: string;
  /** Output meaning the port was taken between picking and binding it. */
  portInUse: RegExp;
}

export interface BackendProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  /** Stops the process (idempotent); resolves once it has exited. */
  stop(): Promise<void>;
}

const PORT_ATTEMPTS = 3;
const TAIL_BYTES = 4_000;
const PORT_IN_USE_GRACE_MS = 1_000;

/** Spawns the backend, waits until it answers, and registers it for cleanup on parent exit. */
export async function startBackendProcess(spec: BackendProcessSpec): Promise<BackendProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = spec.port ?? (await findFreePort());
    try {
      return await startOnce(spec, port);
    } catch (error) {
      const retry = spec.port === undefined && attempt < PORT_ATTEMPTS && error instanceof PortInUseError;
      if (!retry) throw error;
    }
  }
}

class PortInUseError extends Error {}

async function startOnce(spec: BackendProcessSpec, port: number): Promise<BackendProcess> {
  // detached: own process group, so a group kill also reaches children of wrapper scripts.
  const child = spawn(spec.command, spec.args(port), {
    cwd: spec.cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'not found' : `${code ?? 'error'}: ${(error as Error).message}`;
    throw new Error(`${spec.name}: cannot run "${spec.command}" (${why}). ${spec.missingHint}`);
  }
  trackChild(child);

  // Keep only the end of the output: enough for an error message, bounded for long-running servers.
  let tail = '';
  let reportedPortInUse: (() => void) | undefined;
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
    if (spec.portInUse.test(tail)) reportedPortInUse?.();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // A running backend must not keep the Node process alive; the registry kills it on exit.
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();

  const lastOutput = () => (tail.trim() ? `\nLast output:\n${indent(tail.trim())}` : ' (no output)');
  // 'close' (not 'exit') so the output is complete when the message is built.
  const closed = new Promise<string>((resolve) =>
    child.once('close', (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      resolve(`${spec.name} ${how} before answering on port ${port}.${lastOutput()}`);
    }),
  );

  // A backend may report the port taken and keep running: DynamoDB Local's JVM stays up after its
  // BindException. Give it a moment to exit on its own (then `closed` explains), then give up.
  const portTaken = new Promise<string>((resolve) => {
    reportedPortInUse = () => {
      reportedPortInUse = undefined;
      setTimeout(
        () => resolve(`${spec.name} could not listen on port ${port}: it is in use.${lastOutput()}`),
        PORT_IN_USE_GRACE_MS,
      ).unref();
    };
  });

  try {
    await waitUntilReady({
      probe: () => spec.probe(port),
      timeoutMs: spec.startupTimeoutMs,
      abandoned: Promise.race([closed, portTaken]),
      onTimeout: () =>
        new Error(
          `${spec.name} did not answer on port ${port} within ${spec.startupTimeoutMs} ms.${lastOutput()}`,
        ),
    });
  } catch (error) {
    await stopChild(child);
    if (spec.portInUse.test(tail)) throw new PortInUseError((error as Error).message);
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    child,
    pid: child.pid!,
    port,
    stop: () => {
      stopping ??= stopChild(child);
      return stopping;
    },
  };
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
