import type { Response } from 'express';

const KEEPALIVE_MS = 15_000;

/** Server-sent events to every open dashboard. */
export class DashboardFeed {
  private readonly clients = new Set<Response>();
  private readonly keepalive: NodeJS.Timeout;

  constructor() {
    // A comment line now and then keeps proxies from closing an idle stream.
    this.keepalive = setInterval(() => this.write(': keepalive\n\n'), KEEPALIVE_MS);
    this.keepalive.unref();
  }

  /** Turns the response into an event stream that starts with `first`. */
  attach(res: Response, first: { event: string; data: unknown }): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write(frame(first.event, first.data));
    this.clients.add(res);
    res.on('close', () => this.clients.delete(res));
  }

  send(event: string, data: unknown): void {
    this.write(frame(event, data));
  }

  /** Ends every stream (on shutdown), so browsers stop and the server can close. */
  close(): void {
    clearInterval(this.keepalive);
    for (const res of this.clients) res.end();
    this.clients.clear();
  }

  private write(text: string): void {
    for (const res of this.clients) res.write(text);
  }
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
