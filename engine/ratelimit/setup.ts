// Rate limiting as the app uses it: the effective policy table (limits.yaml, the resources' own
// limits, the configured scaling), its store, and the middleware; or a pass-through when
// RATE_LIMITS=off.
import cluster from 'node:cluster';
import type { Middleware } from 'koa';
import type { Config } from '../config/config.js';
import type { LogEvent } from '../log/log.js';
import type { Registry } from '../resource/compiled.js';
import { clientAddress } from './client-ip.js';
import { rateLimits, type RateLimitOptions } from './middleware.js';
import { loadLimitTable, scaleLimitTable, type LimitTable } from './policy.js';
import { primaryStore } from './primary-store.js';
import { memoryStore, redisStore, type LimitStore } from './store.js';

export interface RateLimiting {
  /** The limits in force (the table of limits.yaml as configured), whether or not they are enforced. */
  table: LimitTable;
  /**
   * The product's limits: limits.yaml and the resources' own, before RATE_LIMIT_SCALE and
   * RATE_LIMIT_WINDOW_SCALE. The OpenAPI document shows these: it describes the product, not one
   * deployment's tuning.
   */
  productTable: LimitTable;
  enabled: boolean;
  middleware: Middleware;
  store?: LimitStore;
}

export interface RateLimitingOptions {
  config: Config;
  limitsFile: string;
  registry: Registry;
  roles: Iterable<string>;
  identify: RateLimitOptions['identify'];
  log: LogEvent;
  onRefused?: RateLimitOptions['onRefused'];
}

export function createRateLimiting({ config, limitsFile, registry, roles, identify, log, onRefused }: RateLimitingOptions): RateLimiting {
  const { enabled, scale, windowScale, prefix } = config.rateLimits;
  const productTable = loadLimitTable(limitsFile, registry, roles);
  const table = scaleLimitTable(productTable, { scale, windowScale });
  if (!enabled) return { table, productTable, enabled, middleware: (_ctx, next) => next() };
  const store = chooseStore(config, log);
  const middleware = rateLimits({ table, store, prefix, identify, onRefused, clientAddress: clientAddress(config.trustedProxies) });
  return { table, productTable, enabled, middleware, store };
}

/**
 * Redis when configured (shared by every process and instance); else, in a cluster's worker, its
 * primary process (shared by the workers); else this process's memory.
 */
function chooseStore(config: Config, log: LogEvent): LimitStore {
  const { maxKeys, storeTimeoutMs } = config.rateLimits;
  if (config.redisUrl) return redisStore(config.redisUrl, log, storeTimeoutMs);
  return cluster.isWorker ? primaryStore(log, maxKeys, storeTimeoutMs) : memoryStore(maxKeys, log);
}
