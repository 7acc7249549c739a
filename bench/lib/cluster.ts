// The yardstick servers' processes (raw-server.ts, best-sql/server.ts): as many as the service
// has, by node:cluster, the primary only forwarding a stop to its workers; one process serves alone.
import cluster from 'node:cluster';
import type { Server } from 'node:http';

/** Runs `serve` in `processes` workers (or in this process when one is asked). */
export function clustered(processes: number, serve: () => void) {
  if (!cluster.isPrimary || processes <= 1) return serve();
  for (let i = 0; i < processes; i++) cluster.fork();
  const stop = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  cluster.on('exit', (_worker, code) => {
    if (code) process.exit(code);
  });
}

/** On SIGTERM: stop taking connections, close the pool, and exit (within 2 s whatever happens). */
export function stopOnSigterm(server: Server, pool: { end(): Promise<void> }) {
  process.on('SIGTERM', () => {
    server.close();
    void pool.end().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
