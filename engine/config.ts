// The environment, read once into one typed object. A bad value stops start-up with a message
// naming the variable, so a typo never becomes a surprising default at run time.
import { statSync } from 'node:fs';
import path from 'node:path';
import { checkTrustedProxies } from './ratelimit/client-ip.js';
import { secrets } from './config-secrets.js';

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
  /** Folder of the embedded database (and, later, uploads). */
  dataDir: string;
  jwt: {
    secret: string;
    refreshSecret: string;
    /** Access token lifetime in seconds. */
    expiresIn: number;
    /** Refresh token lifetime in seconds. */
    refreshExpiresIn: number;
    /** True when the secrets were generated for this process (development only). */
    generated: boolean;
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
  /** Social login providers; a provider without client id and secret is off (its routes answer 404). */
  social: Record<SocialProvider, SocialProviderConfig | undefined>;
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
  };
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelSetting = (typeof LOG_LEVELS)[number];

export const SOCIAL_PROVIDERS = ['google', 'github', 'microsoft', 'facebook'] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];

export interface SocialProviderConfig {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  profileUrl: string;
  /** Where the provider sends the browser back: {apiBaseUrl}/api/auth/{provider}/callback unless set. */
  callbackUrl: string;
}

/** The providers' public endpoints; each can be overridden (tests point them at a stub on loopback). */
const PROVIDER_ENDPOINTS: Record<SocialProvider, { authorizeUrl: string; tokenUrl: string; profileUrl: string }> = {
  google: {
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    profileUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
  },
  github: {
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    profileUrl: 'https://api.github.com/user',
  },
  microsoft: {
    authorizeUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    profileUrl: 'https://graph.microsoft.com/oidc/userinfo',
  },
  facebook: {
    authorizeUrl: 'https://www.facebook.com/v19.0/dialog/oauth',
    tokenUrl: 'https://graph.facebook.com/v19.0/oauth/access_token',
    profileUrl: 'https://graph.facebook.com/me?fields=id,name,email,first_name,last_name',
  },
};

export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

/** A connection URL of another service, if set; a value that is not one of its protocols names the variable. */
function serviceUrl(env: Env, name: string, protocols: string[], example: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL such as ${example}`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.map((p) => `${p}//`).join(' or ')}, got "${url.protocol}"`);
  }
  return raw;
}

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

/** A list of folders separated like PATH; each must exist, so a typo fails here, not later. */
function folders(env: Env, name: string): string[] {
  const raw = env[name];
  if (!raw) return [];
  return raw
    .split(path.delimiter)
    .filter(Boolean)
    .map((entry) => {
      const dir = path.resolve(entry);
      let isDir = false;
      try {
        isDir = statSync(dir).isDirectory();
      } catch {
        // reported below
      }
      if (!isDir) throw new ConfigError(`${name}: "${entry}" is not a folder`);
      return dir;
    });
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

function httpUrl(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/** A positive decimal number, such as 0.5 or 10. */
function factor(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(value > 0)) throw new ConfigError(`${name} must be a positive number such as 0.5 or 10, got "${raw}"`);
  return value;
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new ConfigError(`${name} must be on or off, got "${raw}"`);
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

function socialProviders(env: Env, apiBaseUrl: string): Config['social'] {
  const social = {} as Config['social'];
  for (const provider of SOCIAL_PROVIDERS) {
    const prefix = provider.toUpperCase();
    const clientId = env[`${prefix}_CLIENT_ID`];
    const clientSecret = env[`${prefix}_CLIENT_SECRET`];
    if (Boolean(clientId) !== Boolean(clientSecret)) {
      throw new ConfigError(`${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET go together: set both, or neither to switch ${provider} login off`);
    }
    const defaults = PROVIDER_ENDPOINTS[provider];
    social[provider] = clientId && clientSecret
      ? {
          clientId,
          clientSecret,
          authorizeUrl: httpUrl(env, `${prefix}_AUTHORIZE_URL`, defaults.authorizeUrl),
          tokenUrl: httpUrl(env, `${prefix}_TOKEN_URL`, defaults.tokenUrl),
          profileUrl: httpUrl(env, `${prefix}_PROFILE_URL`, defaults.profileUrl),
          callbackUrl: httpUrl(env, `${prefix}_CALLBACK_URL`, `${apiBaseUrl}/api/auth/${provider}/callback`),
        }
      : undefined;
  }
  return social;
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
    dataDir: path.resolve(env.DATA_DIR || './data'),
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
    healthTimeoutMs: integer(env, 'HEALTH_TIMEOUT_MS', 2000, 1),
    databaseTimeoutMs: integer(env, 'DATABASE_TIMEOUT_MS', 10_000, 100, 3_600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 3_600_000),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 3_600_000),
    json: { maxDepth: integer(env, 'JSON_MAX_DEPTH', 32, 2, 1000), maxArray: integer(env, 'JSON_MAX_ARRAY', 1000, 1, 1_000_000) },
    corsOrigins: corsOrigins(env, clientBaseUrl),
    logLevel: logLevel(env, nodeEnv),
    extraResourceDirs: folders(env, 'EXTRA_RESOURCES_DIR'),
    mail: { smtpUrl: smtpUrl(env), from: env.MAIL_FROM || 'Workforce <no-reply@localhost>' },
    clientBaseUrl,
    apiBaseUrl,
    social: socialProviders(env, apiBaseUrl),
    redisUrl: redisUrl(env),
    trustedProxies: trustedProxies(env),
    rateLimits: {
      enabled: onOff(env, 'RATE_LIMITS', true),
      scale: factor(env, 'RATE_LIMIT_SCALE', 1),
      windowScale: factor(env, 'RATE_LIMIT_WINDOW_SCALE', 1),
      maxKeys: integer(env, 'RATE_LIMIT_MAX_KEYS', 250_000, 1000),
      prefix: keyPrefix(env),
    },
  };
}
