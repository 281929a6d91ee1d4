import { connect, createServer, type Socket } from 'node:net';
import { listen } from './listen.js';
import { checkOptionKeys } from './option-keys.js';
import { resetSocket } from './reset-socket.js';

export interface FaultProxyOptions {
  /** Where to forward: `'host:port'` or a URL such as `http://127.0.0.1:8000` or `redis://127.0.0.1:6379`. */
  target: string;
  /** Port to listen on. Default: a free port. */
  port?: number;
  /** Interface to listen on. Default: `127.0.0.1`. */
  host?: string;
}

const FAULT_PROXY_OPTIONS: Record<keyof FaultProxyOptions, true> = { target: true, port: true, host: true };
const FAULT_PROXY_OPTION_KEYS = Object.keys(FAULT_PROXY_OPTIONS);

export interface FaultProxyStats {
  /** Connections accepted since the proxy started. */
  connections: number;
  /** Connections open right now. */
  active: number;
  /** Bytes received from clients (forwarded or not). */
  bytesUp: number;
  /** Bytes received from the target (forwarded or not). */
  bytesDown: number;
  /** How often each fault met traffic (not how often it was switched on). */
  hits: FaultProxyHits;
  /** Requests taken by `applyLate` that have since been forwarded to the target. */
  lateForwarded: number;
}

/** How often each fault met traffic since the proxy started. */
export interface FaultProxyHits {
  /** Requests delayed by `latency`: a connection's first bytes after an answer, sent while it was on. */
  latency: number;
  /** Connections reset by `reset()`. */
  reset: number;
  /** Connections reset by `resetNext` on their first bytes. */
  resetNext: number;
  /** Connections whose response `dropResponses` cut. */
  dropResponses: number;
  /** Connections that lost client bytes to `blackhole`. */
  blackhole: number;
  /** Requests `applyLate` took from their client (whose connection it then cut). */
  applyLate: number;
}

export interface FaultProxy {
  /** Where clients should connect: the target with host and port replaced (same scheme and path), or `host:port`. */
  endpoint: string;
  host: string;
  port: number;
  /** Delays every chunk, in both directions, by `ms` (order preserved). Applies to chunks received from now on. */
  latency(ms: number): void;
  /** Resets (TCP RST) every open connection now. */
  reset(): void;
  /** The next `n` (default 1) new connections are reset when the client sends its first bytes, before they reach the target. */
  resetNext(n?: number): void;
  /**
   * "Request applied, response lost": client bytes still reach the target, but once a connection has
   * passed `afterBytes` (default 0) response bytes since the fault was switched on, the rest are
   * swallowed and the client connection is reset. `false` switches it off.
   */
  dropResponses(on: boolean | { afterBytes?: number }): void;
  /**
   * Accepts connections but never answers: nothing is forwarded in either direction. Switching it
   * off resets the connections that lost bytes to it, so their clients reconnect instead of waiting forever.
   */
  blackhole(on: boolean): void;
  /**
   * "Applied late, after the client gave up": the next request on a connection (the client's
   * bytes from the first one after the connection's last answer until they pause for
   * 20 ms, `LATE_CAPTURE_QUIET_MS`) is held back, the client connection is reset without an answer,
   * and `delayMs` later those bytes are sent to the target on a fresh connection whose answer is
   * discarded. With `times`, only that many requests are taken, then the fault switches itself
   * off. `false` switches it off; requests already taken are still forwarded. Meant for
   * request/response protocols without pipelining (HTTP/1.1, Redis commands one at a time); the
   * fresh connection carries none of the original connection's state (e.g. Redis AUTH or SELECT).
   */
  applyLate(on: false | { delayMs: number; times?: number }): void;
  /** Switches every fault off (latency 0, no pending resets, no dropping, no blackhole, no late apply). */
  clear(): void;
  /** A snapshot of the traffic counters. */
  readonly stats: FaultProxyStats;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

/**
 * How long a client's bytes must pause before `applyLate` takes what it has as the whole request.
 * Clients write a request in one go (headers and body within a millisecond or two).
 */
export const LATE_CAPTURE_QUIET_MS = 20;
/** A late request's answer is awaited (and discarded) until the target is quiet this long, or closes. */
const LATE_ANSWER_QUIET_MS = 100;
const LATE_ANSWER_LONGEST_MS = 10_000;

/** What a lane delivers to its destination: data, end-of-stream, or "reset the connection now". */
type LaneItem = Buffer | 'end' | 'reset';

/** One direction of a connection: a FIFO whose items are delivered no earlier than their due time. */
class Lane {
  private readonly queue: { item: LaneItem; due: number }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly delay: () => number,
    private readonly deliver: (item: LaneItem) => void,
  ) {}

  push(item: LaneItem): void {
    this.queue.push({ item, due: Date.now() + this.delay() });
    this.flush();
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
  }

  private flush(): void {
    if (this.timer) return;
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      const wait = head.due - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.flush();
        }, wait);
        return;
      }
      this.queue.shift();
      this.deliver(head.item);
    }
  }
}

interface Link {
  client: Socket;
  upstream: Socket | undefined;
  up: Lane;
  down: Lane;
  /** Response bytes received on this link. */
  downBytes: number;
  /** `downBytes` when dropResponses was switched on (response bytes before that do not count). */
  dropBase: number;
  /** The response was cut: swallow the rest until the pending reset happens. */
  dropping: boolean;
  resetOnFirstData: boolean;
  /** Accepted during a blackhole (never connected upstream), or lost bytes to one. */
  blackholed: boolean;
  /** Client bytes on this link were swallowed by a blackhole (counted once per link). */
  lostToBlackhole: boolean;
  /** The client's last bytes have had no answer yet: more client bytes belong to the same request. */
  awaitingAnswer: boolean;
  /** A request `applyLate` is taking: its bytes so far, and the timer that ends it when they pause. */
  capture: { chunks: Buffer[]; delayMs: number; timer: NodeJS.Timeout } | undefined;
}

/** Parses the target into where to connect and how to present the proxy's own address. */
function parseTarget(target: string): {
  host: string;
  port: number;
  endpointFor: (host: string, port: number) => string;
} {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    const url = new URL(target);
    const defaults: Record<string, number> = { 'http:': 80, 'https:': 443, 'redis:': 6379, 'rediss:': 6380 };
    const port = url.port ? Number(url.port) : defaults[url.protocol];
    if (!port) throw new Error(`faultProxy: target "${target}" has no port`);
    // URL keeps IPv6 hosts in brackets; net.connect wants them bare.
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const hadPath = /^[a-z][a-z0-9+.-]*:\/\/[^/]*\/./i.test(target) || target.endsWith('/');
    return {
      host,
      port,
      endpointFor: (h, p) => {
        const out = new URL(target);
        out.hostname = h.includes(':') ? `[${h}]` : h;
        out.port = String(p);
        const text = out.toString();
        return hadPath ? text : text.replace(/\/$/, '');
      },
    };
  }
  const colon = target.lastIndexOf(':');
  const port = Number(target.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port <= 0 || port > 65_535) {
    throw new Error(`faultProxy: target must be "host:port" or a URL, got "${target}"`);
  }
  return {
    host: target.slice(0, colon).replace(/^\[(.*)\]$/, '$1'),
    port,
    endpointFor: (h, p) => `${h.includes(':') ? `[${h}]` : h}:${p}`,
  };
}

/** Closes a socket, with a TCP RST when `reset` so the peer sees ECONNRESET rather than a clean end. */
function kill(socket: Socket | undefined, reset: boolean): void {
  if (!socket) return;
  if (reset) resetSocket(socket);
  else socket.destroy();
}

/**
 * A TCP proxy that injects network faults between a client and a backend (DynamoDB Local, Redis,
 * the S3 server): latency, connection resets, lost responses, and a blackhole. It works below the
 * protocol, so it can simulate faults the backends cannot produce themselves.
 */
export async function faultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  checkOptionKeys('faultProxy()', options, FAULT_PROXY_OPTION_KEYS);
  const target = parseTarget(options.target);
  const listenHost = options.host ?? '127.0.0.1';
  const links = new Set<Link>();
  const counters = { connections: 0, bytesUp: 0, bytesDown: 0, lateForwarded: 0 };
  const hits: FaultProxyHits = {
    latency: 0,
    reset: 0,
    resetNext: 0,
    dropResponses: 0,
    blackhole: 0,
    applyLate: 0,
  };
  const faults = {
    latencyMs: 0,
    resetNext: 0,
    drop: undefined as { afterBytes: number } | undefined,
    blackhole: false,
    late: undefined as { delayMs: number; remaining: number } | undefined,
  };
  const delay = () => faults.latencyMs;
  let closed = false;
  /** Late requests waiting for their time, or being forwarded: cancelled by close(). */
  const lateJobs = new Set<{ timer: NodeJS.Timeout; socket?: Socket }>();

  /** Sends a request `applyLate` took to the target, `delayMs` from now, on a connection of its own. */
  const forwardLate = (bytes: Buffer, delayMs: number) => {
    if (closed) return;
    const job: { timer: NodeJS.Timeout; socket?: Socket } = {
      timer: setTimeout(() => {
        const socket = connect({ host: target.host, port: target.port });
        job.socket = socket;
        let quiet: NodeJS.Timeout | undefined;
        const done = () => {
          clearTimeout(quiet);
          clearTimeout(job.timer);
          socket.destroy();
          lateJobs.delete(job);
        };
        job.timer = setTimeout(done, LATE_ANSWER_LONGEST_MS);
        socket.on('connect', () => {
          counters.lateForwarded++;
          socket.write(bytes);
        });
        // The answer goes nowhere; the connection closes once the target has had its say.
        socket.on('data', (chunk: Buffer) => {
          counters.bytesDown += chunk.length;
          clearTimeout(quiet);
          quiet = setTimeout(done, LATE_ANSWER_QUIET_MS);
        });
        socket.on('error', done);
        socket.on('close', done);
      }, delayMs),
    };
    lateJobs.add(job);
  };

  /** Ends the capture of a late request: its bytes go to the target later. */
  const finishCapture = (link: Link) => {
    const capture = link.capture;
    if (!capture) return;
    link.capture = undefined;
    clearTimeout(capture.timer);
    forwardLate(Buffer.concat(capture.chunks), capture.delayMs);
  };

  const destroyLink = (link: Link, reset: boolean) => {
    finishCapture(link);
    link.up.cancel();
    link.down.cancel();
    kill(link.client, reset);
    kill(link.upstream, reset);
    links.delete(link);
  };

  /** Delivers a lane item to one side; writes with backpressure (the other side pauses while this one is full). */
  const deliver = (link: Link, direction: 'up' | 'down', item: LaneItem) => {
    if (item === 'reset') return destroyLink(link, true);
    const [source, dest] = direction === 'up' ? [link.client, link.upstream] : [link.upstream, link.client];
    if (!dest || dest.destroyed) return;
    if (item === 'end') return void dest.end();
    if (!dest.write(item) && source && !source.isPaused()) {
      source.pause();
      dest.once('drain', () => source.resume());
    }
  };

  const server = createServer({ allowHalfOpen: true }, (client) => {
    counters.connections++;
    const link: Link = {
      client,
      upstream: undefined,
      up: new Lane(delay, (item) => deliver(link, 'up', item)),
      down: new Lane(delay, (item) => deliver(link, 'down', item)),
      downBytes: 0,
      dropBase: 0,
      dropping: false,
      resetOnFirstData: faults.resetNext > 0,
      blackholed: faults.blackhole,
      lostToBlackhole: false,
      awaitingAnswer: false,
      capture: undefined,
    };
    if (link.resetOnFirstData) faults.resetNext--;
    links.add(link);

    client.on('error', () => destroyLink(link, true));
    client.on('close', () => destroyLink(link, false));
    client.on('data', (chunk: Buffer) => {
      counters.bytesUp += chunk.length;
      if (link.resetOnFirstData) {
        hits.resetNext++;
        return destroyLink(link, true);
      }
      if (link.blackholed || faults.blackhole) {
        if (!link.lostToBlackhole) hits.blackhole++;
        link.lostToBlackhole = true;
        link.blackholed = true;
        return;
      }
      if (link.capture) {
        link.capture.chunks.push(chunk);
        link.capture.timer.refresh();
        return;
      }
      if (faults.late && !link.awaitingAnswer) {
        // The start of a new request: take it, and answer with a reset once the client pauses.
        hits.applyLate++;
        const { delayMs } = faults.late;
        if (--faults.late.remaining <= 0) faults.late = undefined;
        link.capture = {
          chunks: [chunk],
          delayMs,
          timer: setTimeout(() => destroyLink(link, true), LATE_CAPTURE_QUIET_MS),
        };
        return;
      }
      // A request (its first chunk) sent while latency is on met the fault.
      if (!link.awaitingAnswer && faults.latencyMs > 0) hits.latency++;
      link.awaitingAnswer = true;
      link.up.push(chunk);
    });
    client.on('end', () => {
      // A client that half-closes after its request has sent all of it.
      if (link.capture) return destroyLink(link, true);
      if (!link.blackholed) link.up.push('end');
    });
    if (link.blackholed) return; // accept, never connect, never answer

    const upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    link.upstream = upstream;
    // The target failing (refused, reset) is passed on to the client as a reset.
    upstream.on('error', () => destroyLink(link, true));
    upstream.on('close', (hadError) => {
      if (hadError) destroyLink(link, true);
    });
    upstream.on('end', () => link.down.push('end'));
    upstream.on('data', (chunk: Buffer) => {
      counters.bytesDown += chunk.length;
      link.awaitingAnswer = false;
      const before = link.downBytes - link.dropBase;
      link.downBytes += chunk.length;
      if (link.dropping) return;
      if (faults.blackhole) {
        link.blackholed = true;
        return;
      }
      if (faults.drop) {
        const allowed = Math.max(0, faults.drop.afterBytes - before);
        if (allowed < chunk.length) {
          link.dropping = true;
          hits.dropResponses++;
          if (allowed > 0) link.down.push(chunk.subarray(0, allowed));
          link.down.push('reset'); // after the allowed bytes, so latency keeps its order
          return;
        }
      }
      link.down.push(chunk);
    });
  });

  const port = await listen(server, options.port ?? 0, listenHost);

  const proxy: FaultProxy = {
    endpoint: target.endpointFor(listenHost, port),
    host: listenHost,
    port,
    latency(ms) {
      if (!(ms >= 0)) throw new Error(`faultProxy.latency: expected milliseconds >= 0, got ${ms}`);
      faults.latencyMs = ms;
    },
    reset() {
      for (const link of [...links]) {
        if (!link.client.destroyed) hits.reset++;
        destroyLink(link, true);
      }
    },
    resetNext(n = 1) {
      faults.resetNext = n;
    },
    dropResponses(on) {
      faults.drop = on === false ? undefined : { afterBytes: on === true ? 0 : (on.afterBytes ?? 0) };
      for (const link of links) link.dropBase = link.downBytes;
    },
    applyLate(on) {
      if (on === false) {
        faults.late = undefined;
        return;
      }
      const { delayMs, times = Number.POSITIVE_INFINITY } = on;
      if (!(delayMs >= 0) || !Number.isFinite(delayMs)) {
        throw new Error(`faultProxy.applyLate: expected delayMs >= 0, got ${delayMs}`);
      }
      if (!(times > 0) || (Number.isFinite(times) && !Number.isInteger(times))) {
        throw new Error(`faultProxy.applyLate: expected times to be a positive integer, got ${times}`);
      }
      faults.late = { delayMs, remaining: times };
    },
    blackhole(on) {
      faults.blackhole = on;
      if (!on) for (const link of [...links]) if (link.blackholed) destroyLink(link, true);
    },
    clear() {
      faults.latencyMs = 0;
      faults.resetNext = 0;
      faults.drop = undefined;
      faults.late = undefined;
      proxy.blackhole(false);
    },
    get stats() {
      return { ...counters, active: links.size, hits: { ...hits } };
    },
    close() {
      return new Promise((resolve) => {
        closed = true;
        server.close(() => resolve());
        for (const link of [...links]) destroyLink(link, true);
        for (const job of lateJobs) {
          clearTimeout(job.timer);
          job.socket?.destroy();
        }
        lateJobs.clear();
      });
    },
  };
  return proxy;
}
