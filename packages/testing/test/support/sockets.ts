import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { endianness, networkInterfaces } from 'node:os';

const LISTEN = '0A';

/**
 * Local addresses of the TCP sockets listening on `port`, from /proc/net/tcp and /proc/net/tcp6
 * (Linux): e.g. ['127.0.0.1'], ['::ffff:127.0.0.1'] (an IPv6 socket bound to IPv4 loopback, as Java
 * makes), or ['::'] for a socket that listens on every interface.
 */
export function listeningAddresses(port: number): string[] {
  const addresses: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      // "sl local_address rem_address st ..." with local_address as HEXADDR:HEXPORT
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== LISTEN) continue;
      const [hexAddress, hexPort] = local.split(':') as [string, string];
      if (Number.parseInt(hexPort, 16) === port) addresses.push(decodeAddress(hexAddress));
    }
  }
  return addresses;
}

/** /proc/net prints addresses as 32-bit words in host byte order. */
function decodeAddress(hex: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < hex.length; i += 8) {
    const word = hex
      .slice(i, i + 8)
      .match(/../g)!
      .map((b) => Number.parseInt(b, 16));
    bytes.push(...(endianness() === 'LE' ? word.reverse() : word));
  }
  if (bytes.length === 4) return bytes.join('.');
  if (bytes.every((b) => b === 0)) return '::';
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(':');
}

/** This machine's IPv4 addresses other than loopback, e.g. ['192.0.2.2']. */
export function nonLoopbackIPv4(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && a.family === 'IPv4' && !a.internal)
    .map((a) => a!.address);
}

/** Connects to host:port and reports 'connected' or the error code (e.g. 'ECONNREFUSED'). */
export function tryConnect(host: string, port: number, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}
