// The metrics port (METRICS_PORT): GET /metrics in Prometheus's text format, on a server of its
// own, never on the API's port: what the API serves is public, and metrics tell how it is used.
// Loopback unless METRICS_HOST says otherwise; with METRICS_TOKEN, a scrape must bear it too.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { MetricsSettings } from '../config/config.js';

export interface Scrape {
  contentType: string;
  text: string;
}

/** A metrics port that cannot be listened on: the message names the setting to change. */
export class MetricsPortError extends Error {}

/** Compared as digests: equal lengths, and no early exit that would time out the token a byte at a time. */
const digest = (value: string) => createHash('sha256').update(value).digest();

function bearerMatches(req: IncomingMessage, expected: Buffer): boolean {
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer ([^\s]+)$/i.exec(header);
  return match !== null && timingSafeEqual(digest(match[1]), expected);
}

function answer(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** Listens on METRICS_HOST:METRICS_PORT; `scrape` is asked for the text at each GET /metrics. */
export async function serveMetrics(settings: MetricsSettings, scrape: () => Promise<Scrape>, onError: (err: unknown) => void): Promise<Server> {
  const token = settings.token === undefined ? undefined : digest(settings.token);
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return answer(res, 404, 'Not found: metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, 405, 'Method not allowed\n', { allow: 'GET, HEAD' });
    if (token && !bearerMatches(req, token)) return answer(res, 401, 'A bearer token is required (METRICS_TOKEN)\n', { 'www-authenticate': 'Bearer' });
    scrape().then(
      ({ contentType, text }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err) => {
        onError(err);
        answer(res, 500, 'Metrics could not be collected\n');
      },
    );
  });
  // A scraper keeps its connection open between scrapes; a stopping process must not wait for it.
  server.keepAliveTimeout = 5000;
  try {
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject).listen(settings.port, settings.host));
  } catch (err: any) {
    if (err?.code === 'EADDRINUSE') throw new MetricsPortError(`METRICS_PORT ${settings.port} on ${settings.host} is already in use: set METRICS_PORT to another port.`);
    if (err?.code === 'EACCES') throw new MetricsPortError(`Not allowed to listen on METRICS_PORT ${settings.port}: set it to a port above 1023.`);
    if (err?.code === 'EADDRNOTAVAIL') throw new MetricsPortError(`METRICS_HOST ${settings.host} is not an address of this machine.`);
    throw err;
  }
  return server;
}

/** The port the metrics server listens on (METRICS_PORT=0 picks a free one). */
export function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/** Stops listening and drops the scrapers' idle connections. */
export function closeMetrics(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
