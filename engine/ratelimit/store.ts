// Where koa-ratelimit keeps its counts: a bounded Map in this process by default, Redis (shared
// by every instance) when REDIS_URL is set, the cluster's primary process in a cluster's worker
// (primary-store.ts). Redis trouble never stops the service: a count that
// cannot be taken is skipped (fail-open), and the outage is logged once when it starts and once
// when it ends, never per request.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { LogEvent } from '../log/log.js';
import { redisReady } from '../redis-ready.js';
import { boundedCounts, SWEEP_MS } from './expiring-counts.js';
import { memoryTakeMany, redisTakeMany, type TakeMany } from './take-many.js';

export interface LimitStore {
  /** Where the counts live, as the log says it: this process, Redis, or the cluster's primary process. */
  kind: 'memory' | 'redis' | 'primary';
  /** koa-ratelimit's driver for `db`. */
  driver: 'memory' | 'redis';
  db: Map<string, unknown> | Redis;
  /** Counts `n` requests at once in the bucket `key` (koa-ratelimit's key: namespace and id), or none when fewer are left (take-many.ts). */
  takeMany: TakeMany;
  /** False for a while after a count failed: requests then go on uncounted without trying. */
  available(): boolean;
  /** A count failed (Redis unreachable): logged if it is the first since the store last worked. */
  failed(err: unknown): void;
  /** A count worked: ends an outage in the log. */
  worked(): void;
  /** Resolves once counts can be taken, or after `timeoutMs` (then the outage is logged). */
  ready(timeoutMs: number): Promise<void>;
  /**
   * The longest a request waits for its counts, all of them together, before it goes on
   * uncounted (RATE_LIMIT_STORE_TIMEOUT_MS); none for the in-memory store, which never waits.
   */
  timeoutMs?: number;
  close(): Promise<void>;
}

/** How long counting pauses after a failure before the next request tries the store again. */
const RETRY_AFTER_FAILURE_MS = 2000;

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Fail-open bookkeeping shared by the stores: an outage is logged when it starts and when it
 * ends, never per request; while it lasts, only one request per RETRY_AFTER_FAILURE_MS asks the
 * store, so a store that answers slowly costs the service one slow request, not every request.
 */
export function outageTracker(log: LogEvent, what: string) {
  let down = false;
  let retryAt = 0;
  return {
    available: () => !down || Date.now() >= retryAt,
    failed(err: unknown) {
      retryAt = Date.now() + RETRY_AFTER_FAILURE_MS;
      if (down) return;
      down = true;
      log('warn', `rate limits: ${what} does not answer; requests are let through uncounted until it does`, { error: describe(err) });
    },
    worked() {
      if (!down) return;
      down = false;
      log('info', `rate limits: ${what} answers again; requests are counted`);
    },
  };
}

export function memoryStore(maxKeys: number, log: LogEvent, sweepMs = SWEEP_MS): LimitStore {
  const db = boundedCounts(maxKeys, log, sweepMs);
  return {
    kind: 'memory',
    driver: 'memory',
    db,
    takeMany: memoryTakeMany(db),
    // A throwing count here is a bug, not an outage; it is still never a failed request.
    ...outageTracker(log, 'the in-memory store'),
    async ready() {},
    async close() {
      db.close();
    },
  };
}

// ioredis is required only when REDIS_URL is set: without it no process loads it (several MB each).
const require = createRequire(import.meta.url);

export function redisStore(url: string, log: LogEvent, timeoutMs: number): LimitStore {
  const { Redis } = require('ioredis') as typeof import('ioredis');
  const outage = outageTracker(log, 'Redis');
  const failed = outage.failed;
  const db = new Redis(url, {
    // Fail fast instead of queueing while disconnected: the request must not wait for Redis.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Each command settles by then; the request's own bound (middleware.ts) is what a client sees:
    // with auto-pipelining a command may wait for the round trip before it to end first.
    commandTimeout: timeoutMs,
    // A Redis that hangs (connection open, no answer) would cost every request the command
    // timeout for as long as it hangs: a connection silent this long with commands waiting is
    // dropped instead, and until a new one is ready counts are skipped at once.
    socketTimeout: 2 * timeoutMs,
    // Keep reconnecting, at most every 2 s, for as long as the service runs.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    // Concurrent counts of one request (tier, method, endpoint) travel in one round trip.
    enableAutoPipelining: true,
  });
  // Without a listener ioredis prints every reconnection failure; the outage is logged once instead.
  db.on('error', failed);
  return {
    kind: 'redis',
    driver: 'redis',
    db,
    takeMany: redisTakeMany(db),
    ...outage,
    timeoutMs,
    ready: (timeoutMs) => redisReady(db, timeoutMs, () => failed(new Error(`not ready after ${timeoutMs} ms`))),
    async close() {
      db.removeAllListeners('error');
      db.on('error', () => {});
      db.disconnect();
    },
  };
}
