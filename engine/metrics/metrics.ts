// Prometheus metrics of one serving process (prom-client), on a registry of its own: tests build
// several apps in one process, and a cluster's primary gathers each worker's registry (cluster.ts).
// Made only when METRICS_PORT is set: otherwise no middleware runs and nothing is counted.
// Requests are labelled by their route's template (`/api/employee/:id`), never by the raw path:
// one series per declared route, whatever ids or garbage clients send.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import type { Context, Middleware, Next } from 'koa';
import type { Registry } from 'prom-client';
import { routeMatchOf } from '../route.js';

/** The route label of a request no declared route answers (a 404, a 405): one series for all of them. */
export const UNMATCHED = 'unmatched';

export interface Metrics {
  registry: Registry;
  /** Counts and times every request; outermost but for the route match, so it sees the final status. */
  middleware: Middleware;
  /** A request refused by a rate limit, once per policy that refused it. */
  rateLimitRefused(policy: string): void;
  /*
   * Idempotency replays (issue 21) belong here once idempotency keys exist: a counter
   * `idempotency_replays_total`, incremented where a stored answer is replayed. Nothing yet.
   */
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/** Seconds, as Prometheus wants durations. */
const since = (start: number) => (performance.now() - start) / 1000;

// prom-client is required here, when metrics are made, not imported: with METRICS_PORT unset a
// worker never loads it (several MB of its memory). createApp is synchronous, hence require.
const require = createRequire(import.meta.url);

export function createMetrics(db: Knex): Metrics {
  const { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } = require('prom-client') as typeof import('prom-client');
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by method, route template and status.', labelNames, registers });
  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from a request reaching the app to its answer being ready (a streamed body is sent after), by method, route template and status.',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const inFlight = new Gauge({ name: 'http_requests_in_flight', help: 'Requests being handled now.', registers });
  const refusals = new Counter({ name: 'rate_limit_refusals_total', help: 'Requests refused with 429, by the rate-limit policy that refused them.', labelNames: ['policy'], registers });

  // The pool is read when scraped, not kept up to date: nothing is added to a query's path. The
  // embedded database's pool holds its one connection (max 1).
  const pool = () => (db.client as { pool?: TarnPool }).pool;
  const poolGauge = (name: string, help: string, read: (p: TarnPool) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const p = pool();
        this.set(p ? read(p) : 0);
      },
    });
  poolGauge('db_pool_connections_in_use', 'Database connections lent out to a query or transaction.', (p) => p.numUsed());
  poolGauge('db_pool_connections_idle', 'Database connections open and free.', (p) => p.numFree());
  poolGauge('db_pool_acquires_waiting', 'Queries or transactions waiting for a database connection.', (p) => p.numPendingAcquires());
  poolGauge('db_pool_connections_max', 'Most database connections the pool opens.', (p) => p.max);

  const queries = new Histogram({
    name: 'db_query_duration_seconds',
    help: 'Time a database statement took, failed ones included (waiting for a connection excluded).',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  watchQueries(db, (seconds) => queries.observe(seconds));

  async function middleware(ctx: Context, next: Next) {
    const start = performance.now();
    inFlight.inc();
    let status: number | undefined;
    try {
      await next();
      status = ctx.status;
    } catch (err) {
      // Past the error middleware only when something outside it failed: Koa answers with this.
      status = (err as { status?: number }).status ?? 500;
      throw err;
    } finally {
      inFlight.dec();
      const labels = { method: ctx.method, route: routeMatchOf(ctx)?.route?.path ?? UNMATCHED, status: status ?? 500 };
      requests.inc(labels);
      durations.observe(labels, since(start));
    }
  }

  return { registry, middleware, rateLimitRefused: (policy) => refusals.inc({ policy }) };
}

/**
 * Times every statement through knex's own events: its queries and the engine's compiled
 * statements (resource/sql/runner.ts emits the same). Starts are kept by the query's id until its
 * answer or error; a statement that never reports back (its connection destroyed) is dropped when
 * too many are pending, so the map cannot grow without bound.
 */
function watchQueries(db: Knex, observe: (seconds: number) => void) {
  const started = new Map<string, number>();
  const MAX_PENDING = 10_000;
  const ended = (query: { __knexQueryUid?: string } | undefined) => {
    const uid = query?.__knexQueryUid;
    const start = uid === undefined ? undefined : started.get(uid);
    if (start === undefined) return;
    started.delete(uid!);
    observe(since(start));
  };
  db.on('query', (query: { __knexQueryUid?: string }) => {
    if (query.__knexQueryUid === undefined) return;
    if (started.size >= MAX_PENDING) started.clear();
    started.set(query.__knexQueryUid, performance.now());
  });
  db.on('query-response', (_response: unknown, query: { __knexQueryUid?: string }) => ended(query));
  db.on('query-error', (_err: unknown, query: { __knexQueryUid?: string }) => ended(query));
}
