// The environment, read once into one typed object. A bad value stops start-up with a message
// naming the variable, so a typo never becomes a surprising default at run time.
import path from 'node:path';
import { checkTrustedProxies } from '../ratelimit/client-ip.js';
import type { PoolerSetting } from '../db/pooler.js';
import { embeddedSettings, type EmbeddedOptions } from './embedded.js';
import { secrets } from './secrets.js';
import { ConfigError, factor, folders, httpUrl, integer, onOff, serviceUrl, type Env } from './values.js';

export { ConfigError, type Env } from './values.js';

export interface Config {
  env: string;
  port: number;
  host: string;
  /**
   * Processes that serve requests on PostgreSQL (WEB_CONCURRENCY); undefined: one per core. The
   * embedded database is one process on one folder, so it always runs one.
   */
  webConcurrency?: number;
  /** PostgreSQL connection string; undefined means the embedded PGlite database. */
  databaseUrl?: string;
  /** PostgreSQL schema to work in (created if missing); undefined means the server's default search path. */
  databaseSchema?: string;
  /** DATABASE_POOLER: whether a transaction-mode pooler stands before PostgreSQL (auto: probed at start-up). */
  databasePooler: PoolerSetting;
  /** Folder of the embedded database (and, later, uploads). */
  dataDir: string;
  /** The embedded database's commit durability, the room it keeps free and its buffer cache (EMBEDDED_DURABILITY, EMBEDDED_MIN_FREE_MB, EMBEDDED_CACHE_MB). */
  embedded: Required<EmbeddedOptions>;
  jwt: {
    secret: string;
    refreshSecret: string;
    /** Access token lifetime in seconds. */
    expiresIn: number;
    /** Refresh token lifetime in seconds. */
    refreshExpiresIn: number;
    /** True when the secrets were generated for this process (development only). */
    generated: boolean;
    /** Which of them were (JWT_SECRET, JWT_REFRESH_SECRET unset): kept-secrets.ts replaces only those. */
    secretGenerated: boolean;
    refreshSecretGenerated: boolean;
    /**
     * The secrets in use before the last rotation (JWT_SECRET_PREVIOUS, JWT_REFRESH_SECRET_PREVIOUS):
     * tokens they signed are still accepted until they expire; new ones are signed with the current.
     */
    previousSecret?: string;
    previousRefreshSecret?: string;
  };
  /**
   * Milliseconds an instance trusts its last answer to "is this access token's session still live?";
   * 0 asks the database on every request. A session revoked on another instance stops working here
   * within this time; one revoked through this instance, at once.
   */
  sessionCheckTtlMs: number;
  /** Largest JSON body accepted, in bytes. */
  bodyLimit: number;
  /** Uploaded files (image assets): UPLOAD_DIR, by default `uploads` inside DATA_DIR. */
  uploadDir: string;
  /** Largest uploaded file accepted, in bytes (10 MiB). */
  uploadMaxBytes: number;
  /** Largest import file or body accepted, in bytes. */
  importMaxBytes: number;
  /** Most rows one import takes. */
  importMaxRows: number;
  /** Most items in one bulk write (BULK_MAX_ITEMS); a JSON array longer than JSON_MAX_ARRAY is refused before it anyway. */
  bulkMaxItems: number;
  /** Milliseconds a health probe waits for the database. */
  healthTimeoutMs: number;
  /**
   * Milliseconds a database query (or getting a connection for one) may take before the request
   * gets a 503 (DATABASE_TIMEOUT_MS): a database that stopped answering never holds a request longer.
   */
  databaseTimeoutMs: number;
  /**
   * Milliseconds a client has to send a whole request, headers and body (REQUEST_TIMEOUT_MS);
   * a slower one gets 408 and its connection is closed, so slow senders cannot hold connections.
   */
  requestTimeoutMs: number;
  /** Milliseconds open requests may take to finish after SIGTERM before their connections are cut (SHUTDOWN_GRACE_MS). */
  shutdownGraceMs: number;
  /**
   * Milliseconds a process goes on serving after SIGTERM with its readiness answering 503, before
   * it stops taking connections (SHUTDOWN_DELAY_MS): the time a load balancer needs to see it and
   * send traffic elsewhere.
   */
  shutdownDelayMs: number;
  /** Limits on a JSON body's shape: nesting depth and items in one array (JSON_MAX_DEPTH, JSON_MAX_ARRAY). */
  json: { maxDepth: number; maxArray: number };
  /**
   * Origins whose browser pages may call the API (CORS_ORIGINS, comma-separated); CLIENT_BASE_URL's
   * origin when unset. Any other origin gets no CORS headers, so its pages cannot read answers.
   */
  corsOrigins: string[];
  /** Least severe log level written (LOG_LEVEL): fatal, error, warn, info, debug, trace or silent. */
  logLevel: LogLevelSetting;
  /**
   * Folders of further *.yaml definitions served beside resources/ (a deployment's own resources);
   * each one's migrations/ subfolder, if it has one, is migrated after the project's.
   */
  extraResourceDirs: string[];
  mail: {
    /** smtp:// or smtps:// URL of the server that sends mail; undefined: each message is logged as one JSON line. */
    smtpUrl?: string;
    from: string;
  };
  /** Where the web client lives: links in mails and the end of social login point there. */
  clientBaseUrl: string;
  /** This service's own public address (social login callbacks are built from it). */
  apiBaseUrl: string;
  /** The variables this configuration was read from: an application's modules read their own settings there. */
  vars: Readonly<Env>;
  /** redis:// or rediss:// URL; rate-limit counts live there (shared by every instance) when set. */
  redisUrl?: string;
  /**
   * Proxies whose X-Forwarded-For is believed (addresses, CIDR ranges, or loopback, linklocal,
   * uniquelocal); with none, a caller's address is the socket's.
   */
  trustedProxies: string[];
  rateLimits: {
    /** RATE_LIMITS=off switches every limit off (development). */
    enabled: boolean;
    /** Multiplies every limit's request count. */
    scale: number;
    /** Multiplies every window (tests use short ones). */
    windowScale: number;
    /** Most counts the in-memory store keeps before it drops the oldest. */
    maxKeys: number;
    /** Start of every Redis key, so that several deployments can share one Redis. */
    prefix: string;
    /** The longest a request waits for its counts from Redis or a cluster's primary before going on uncounted. */
    storeTimeoutMs: number;
  };
  idempotency: {
    /** Seconds a request's answer is kept for retries with its Idempotency-Key (IDEMPOTENCY_KEY_TTL_SECONDS, 24 h). */
    ttlSeconds: number;
    /**
     * Milliseconds after which a request that claimed a key and never answered (its process died)
     * no longer holds it: three times DATABASE_TIMEOUT_MS, at least a minute.
     */
    runningMs: number;
  };
  /**
   * Prometheus metrics (METRICS_PORT, METRICS_HOST, METRICS_TOKEN): served on a port of their own,
   * never on the API's; undefined when METRICS_PORT is unset (nothing listens, nothing is counted).
   */
  metrics?: MetricsSettings;
}

export interface MetricsSettings {
  port: number;
  /** Address the metrics port binds to: loopback unless set, so a scraper elsewhere is a choice. */
  host: string;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token?: string;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelSetting = (typeof LOG_LEVELS)[number];

const databaseUrl = (env: Env) => serviceUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], 'postgres://user@host:5432/db');

function databaseSchema(env: Env, databaseUrl: string | undefined): string | undefined {
  const raw = env.DATABASE_SCHEMA;
  if (!raw) return undefined;
  if (!databaseUrl) throw new ConfigError('DATABASE_SCHEMA applies to PostgreSQL only: set DATABASE_URL too, or unset DATABASE_SCHEMA');
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) {
    throw new ConfigError(`DATABASE_SCHEMA must be a lower-case SQL name (letters, digits, _), got "${raw}"`);
  }
  return raw;
}

function databasePooler(env: Env, databaseUrl: string | undefined): PoolerSetting {
  const raw = env.DATABASE_POOLER || 'auto';
  if (raw !== 'auto' && raw !== 'transaction' && raw !== 'none') throw new ConfigError(`DATABASE_POOLER must be auto, transaction or none, got "${raw}"`);
  if (raw !== 'auto' && !databaseUrl) throw new ConfigError('DATABASE_POOLER applies to PostgreSQL only: set DATABASE_URL too, or unset DATABASE_POOLER');
  return raw;
}

/** Comma-separated origins (scheme, host and port of a web page); CLIENT_BASE_URL's origin by default. */
function corsOrigins(env: Env, clientBaseUrl: string): string[] {
  const raw = env.CORS_ORIGINS;
  if (raw === undefined || raw.trim() === '') return [new URL(clientBaseUrl).origin];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      let url: URL | undefined;
      try {
        url = new URL(entry);
      } catch {
        // reported below
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== entry.replace(/\/$/, '')) {
        throw new ConfigError(`CORS_ORIGINS must list origins such as https://app.example.com (scheme, host, optional port; no path), got "${entry}"`);
      }
      return url.origin;
    });
}

function logLevel(env: Env, nodeEnv: string): LogLevelSetting {
  const raw = env.LOG_LEVEL;
  // Suites run hundreds of apps: their request lines would bury what a failing test printed.
  if (raw === undefined || raw === '') return nodeEnv === 'test' ? 'warn' : 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return raw as LogLevelSetting;
}

/** Comma-separated; each entry checked by proxy-addr, the library that will use it. */
function trustedProxies(env: Env): string[] {
  const entries = (env.TRUST_PROXY ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  try {
    checkTrustedProxies(entries);
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY must list IP addresses, CIDR ranges, loopback, linklocal or uniquelocal: ${(err as Error).message}`);
  }
  return entries;
}

function keyPrefix(env: Env): string {
  const raw = env.RATE_LIMIT_PREFIX || 'ratelimit';
  if (!/^[A-Za-z0-9_:.-]{1,64}$/.test(raw)) throw new ConfigError(`RATE_LIMIT_PREFIX must be 1 to 64 letters, digits, _ : . or -, got "${raw}"`);
  return raw;
}

const redisUrl = (env: Env) => serviceUrl(env, 'REDIS_URL', ['redis:', 'rediss:'], 'redis://host:6379');

const smtpUrl = (env: Env) => serviceUrl(env, 'SMTP_URL', ['smtp:', 'smtps:'], 'smtp://user:pass@host:587 or smtps://host:465');

/** METRICS_PORT unset: no metrics. It may not be the API's port: metrics are never served on the API. */
function metricsSettings(env: Env, port: number): MetricsSettings | undefined {
  const token = env.METRICS_TOKEN || undefined;
  const metricsHost = env.METRICS_HOST || '127.0.0.1';
  if (env.METRICS_PORT === undefined || env.METRICS_PORT === '') {
    if (token || env.METRICS_HOST) throw new ConfigError('METRICS_HOST and METRICS_TOKEN apply to the metrics port: set METRICS_PORT too, or unset them');
    return undefined;
  }
  const metricsPort = integer(env, 'METRICS_PORT', 0, 0, 65535);
  if (metricsPort !== 0 && metricsPort === port) throw new ConfigError(`METRICS_PORT must differ from PORT (${port}): metrics are not served on the API`);
  if (token !== undefined && token.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters');
  return { port: metricsPort, host: metricsHost, token };
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = env.NODE_ENV ?? 'development';
  const production = nodeEnv === 'production';
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const apiBaseUrl = httpUrl(env, 'API_BASE_URL', `http://localhost:${port}`);
  const clientBaseUrl = httpUrl(env, 'CLIENT_BASE_URL', 'http://localhost:4200');
  return {
    env: nodeEnv,
    port,
    host: env.HOST || '0.0.0.0',
    webConcurrency: env.WEB_CONCURRENCY ? integer(env, 'WEB_CONCURRENCY', 1, 1, 1024) : undefined,
    databaseUrl: databaseUrl(env),
    databaseSchema: databaseSchema(env, databaseUrl(env)),
    databasePooler: databasePooler(env, databaseUrl(env)),
    dataDir: path.resolve(env.DATA_DIR || './data'),
    embedded: embeddedSettings(env),
    jwt: {
      ...secrets(env, production),
      expiresIn: integer(env, 'JWT_EXPIRES_IN', 86_400, 1),
      refreshExpiresIn: integer(env, 'JWT_REFRESH_EXPIRES_IN', 7 * 86_400, 1),
    },
    sessionCheckTtlMs: integer(env, 'SESSION_CHECK_TTL_MS', 5000, 0, 3_600_000),
    bodyLimit: integer(env, 'BODY_LIMIT', 1024 * 1024, 1),
    uploadDir: path.resolve(env.UPLOAD_DIR || path.join(env.DATA_DIR || './data', 'uploads')),
    uploadMaxBytes: integer(env, 'UPLOAD_MAX_BYTES', 10 * 1024 * 1024, 1),
    importMaxBytes: integer(env, 'IMPORT_MAX_BYTES', 10 * 1024 * 1024, 1),
    importMaxRows: integer(env, 'IMPORT_MAX_ROWS', 10_000, 1),
    bulkMaxItems: integer(env, 'BULK_MAX_ITEMS', 1000, 1, 100_000),
    healthTimeoutMs: integer(env, 'HEALTH_TIMEOUT_MS', 2000, 1),
    databaseTimeoutMs: integer(env, 'DATABASE_TIMEOUT_MS', 10_000, 100, 3_600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 3_600_000),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 3_600_000),
    shutdownDelayMs: integer(env, 'SHUTDOWN_DELAY_MS', 0, 0, 600_000),
    json: { maxDepth: integer(env, 'JSON_MAX_DEPTH', 32, 2, 1000), maxArray: integer(env, 'JSON_MAX_ARRAY', 1000, 1, 1_000_000) },
    corsOrigins: corsOrigins(env, clientBaseUrl),
    logLevel: logLevel(env, nodeEnv),
    extraResourceDirs: folders(env, 'EXTRA_RESOURCES_DIR'),
    mail: { smtpUrl: smtpUrl(env), from: env.MAIL_FROM || 'Workforce <no-reply@localhost>' },
    clientBaseUrl,
    apiBaseUrl,
    vars: env,
    redisUrl: redisUrl(env),
    trustedProxies: trustedProxies(env),
    rateLimits: {
      enabled: onOff(env, 'RATE_LIMITS', true),
      scale: factor(env, 'RATE_LIMIT_SCALE', 1),
      windowScale: factor(env, 'RATE_LIMIT_WINDOW_SCALE', 1),
      maxKeys: integer(env, 'RATE_LIMIT_MAX_KEYS', 250_000, 1000),
      prefix: keyPrefix(env),
      storeTimeoutMs: integer(env, 'RATE_LIMIT_STORE_TIMEOUT_MS', 500, 10, 60_000),
    },
    idempotency: {
      ttlSeconds: integer(env, 'IDEMPOTENCY_KEY_TTL_SECONDS', 86_400, 60, 30 * 86_400),
      runningMs: Math.max(60_000, 3 * integer(env, 'DATABASE_TIMEOUT_MS', 10_000, 100, 3_600_000)),
    },
    metrics: metricsSettings(env, port),
  };
}
