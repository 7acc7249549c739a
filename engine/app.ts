// Builds the Koa app: errors → bearer token → rate limits → authentication → JSON body → routes.
// Everything is compiled here, once: definitions, validators, routes and the OpenAPI document.
import Router from '@koa/router';
import Koa from 'koa';
import { Model } from 'objection';
import { authenticate, bearerToken, tokenHolder } from '../auth/authenticate.js';
import { authModules } from '../auth/modules.js';
import { sessionCheck } from '../auth/session/live.js';
import { loadRoles } from '../auth/roles.js';
import { tokenKeys } from '../auth/tokens.js';
import type { Config } from './config.js';
import { errorMiddleware } from './errors.js';
import { registerHealth } from './health.js';
import { jsonBody } from './http/body.js';
import { createMailer, type Mailer } from './mail.js';
import type { Engine, Module } from './module.js';
import { buildOpenApiDocument } from './openapi/document.js';
import { registerDocs } from './openapi/docs-routes.js';
import { LIMITS_FILE, RESOURCES_DIR, ROLES_FILE } from './paths.js';
import { logEvent, type LogEvent } from './log.js';
import { createRateLimiting, type RateLimiting } from './ratelimit/setup.js';
import { compileDefinitions } from './resource/compile.js';
import { loadDefinitionDir, loadDefinitionFile } from './resource/load.js';
import { registerResourceRoutes } from './resource/routes.js';
import { routesByPrefix } from './routing/by-prefix.js';
import { ResourceService } from './resource/service.js';
import type { Knex } from 'knex';

export interface AppOptions {
  config: Config;
  db: Knex;
  /** Folders of *.yaml definitions; the project's resources/ by default. */
  resourceDirs?: string[];
  modules?: Module[];
  rolesFile?: string;
  /** Rate limits; the project's resources/limits.yaml by default. */
  limitsFile?: string;
  logError?: (err: unknown) => void;
  /** Events worth a line in the log (a Redis outage); one JSON line on stdout by default. */
  log?: LogEvent;
  /** Outgoing mail; by default SMTP_URL's server, or one log line per message. */
  mailer?: Mailer;
}

export interface App {
  koa: Koa;
  engine: Engine;
  openapi: Record<string, unknown>;
  rateLimiting: RateLimiting;
  /** Resolves when the services the app counts on are connected (or have been waited for long enough). */
  ready(): Promise<void>;
  /** Closes what the app opened itself (the rate-limit store); the database is the caller's. */
  close(): Promise<void>;
}

const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'HPE_INVALID_EOF_STATE']);

function isClientGone(err: any): boolean {
  return CLIENT_GONE.has(err?.code) || err?.message === 'aborted';
}

/** How long start-up waits for Redis before serving without it (fail-open). */
const STORE_READY_TIMEOUT_MS = 2000;

export function createApp(options: AppOptions): App {
  const { config, db } = options;
  const modules = [...authModules, ...(options.modules ?? [])];
  const roles = loadRoles(options.rolesFile ?? ROLES_FILE);
  const sources = [
    ...(options.resourceDirs ?? [RESOURCES_DIR]).flatMap((dir) => loadDefinitionDir(dir)),
    ...modules.flatMap((m) => (m.definitions ?? []).map((file) => loadDefinitionFile(file))),
  ];
  // Models of this app are bound to this app's database (tests run several apps in one process).
  class BoundModel extends Model {}
  BoundModel.knex(db);
  const registry = compileDefinitions(sources, { permissions: roles.permissions, baseModel: BoundModel });
  const services = new Map([...registry.values()].map((r) => [r.name, new ResourceService(db, r)]));
  const engine: Engine = { config, db, registry, services, roles, keys: tokenKeys(config), mailer: options.mailer ?? createMailer(config) };

  // Case-sensitive like the paths the authentication middleware lets through without a token:
  // /API/employee must not reach a route by another spelling.
  const router = new Router({ sensitive: true });
  registerHealth(router, db, config.healthTimeoutMs);
  // Modules first: their fixed paths (/api/tags/getByName) must win over a generated /:id.
  for (const module of modules) module.register(router, engine);
  for (const service of services.values()) if (service.resource.routes) registerResourceRoutes(router, service);
  const liveSession = sessionCheck(db, config.sessionCheckTtlMs);
  const rateLimiting = createRateLimiting({
    config,
    limitsFile: options.limitsFile ?? LIMITS_FILE,
    registry,
    roles: roles.grants.keys(),
    identify: tokenHolder,
    log: options.log ?? logEvent,
  });
  const openapi = buildOpenApiDocument(engine, modules, rateLimiting.table);
  registerDocs(router, openapi);

  const koa = new Koa();
  // Errors after the answer began (a streamed body failing, a client gone mid-transfer) reach
  // Koa, not the error middleware: a client that left is routine; anything else is logged once.
  koa.on('error', (err: any) => {
    if (!isClientGone(err)) (options.logError ?? ((e) => console.error(e)))(err);
  });
  koa.use(errorMiddleware(options.logError));
  // The token is verified before the limits count the request (they key a caller by it), and
  // refused only after, so that a request with a bad token still counts against its address.
  koa.use(bearerToken(engine.keys, roles, liveSession));
  koa.use(rateLimiting.middleware);
  koa.use(authenticate());
  koa.use(jsonBody(config.bodyLimit, modules.flatMap((m) => m.ownBodies ?? [])));
  koa.use(routesByPrefix(router));
  koa.use(router.allowedMethods());
  return {
    koa,
    engine,
    openapi,
    rateLimiting,
    ready: async () => rateLimiting.store?.ready(STORE_READY_TIMEOUT_MS),
    close: async () => rateLimiting.store?.close(),
  };
}
