import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express, { type Response } from 'express';
import { DemoActionError, type DemoHub } from './demo-hub.js';

/** The dashboard's static files: plain HTML, CSS and JS, no build step. */
const PUBLIC_DIR = fileURLToPath(new URL('../../public/', import.meta.url));

/** Serves the dashboard, its event stream, its actions and the ledger on one port. */
export async function startDashboardServer(
  hub: DemoHub,
  port: number,
  log: (line: string) => void,
): Promise<{ server: Server; url: string }> {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.static(PUBLIC_DIR));
  app.use(hub.ledger.routes());

  app.get('/events', (_req, res) => hub.feed.attach(res, { event: 'snapshot', data: hub.snapshot() }));
  app.get('/api/state', (_req, res) => {
    res.json({ ...hub.snapshot(), ledger: { staleRejected: hub.ledger.ledger.staleRejected } });
  });

  const start = (res: Response, action: () => Promise<unknown>) => {
    try {
      action().catch((error) => log(`action failed: ${(error as Error).message}`));
      res.status(202).json({ started: true });
    } catch (error) {
      refuse(res, error);
    }
  };
  app.post('/api/burst', (_req, res) => start(res, () => hub.burst()));
  app.post('/api/jobs', (_req, res) => start(res, () => hub.enqueueJobs()));
  app.post('/api/exports', (_req, res) => start(res, () => hub.exports()));
  app.post('/api/replicas/:name/kill', (req, res) => {
    try {
      hub.kill(req.params.name);
      res.status(202).json({ killed: req.params.name });
    } catch (error) {
      refuse(res, error);
    }
  });

  const server = createServer(app);
  const actualPort = await listen(server, port).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE' || port === 0) throw error;
    log(`Port ${port} is taken; using a free port instead (choose one with --port <n>).`);
    return listen(server, 0);
  });
  return { server, url: `http://127.0.0.1:${actualPort}` };
}

/** A refused action: its DemoActionError status (500 for anything else) and message. */
function refuse(res: Response, error: unknown): void {
  const status = error instanceof DemoActionError ? error.status : 500;
  res.status(status).json({ error: (error as Error).message });
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
