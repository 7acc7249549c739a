// Builds the Koa app: unread bodies → request id → route match → metrics (METRICS_PORT only) →
// request log → security headers → CORS → errors → identify the caller → rate limits → UTF-8 URL
// → authentication → JSON body → routes.
// Everything is compiled here, once: definitions, validators, routes and the OpenAPI document.
// What is the application's (definitions, modules, roles, limits, how callers authenticate) is
// handed in: the engine names none of it.
import { createHmac } from 'node:crypto';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import { Model } from 'objection';
import type { Authenticator } from './authenticator.js';
import type { RoleTable } from './caller.js';
import type { Config } from './config/config.js';
import { errorMiddleware } from './http/error-envelope.js';
import { healthRoutes, type ServingState } from './health.js';
import { jsonBody } from './http/body.js';
import { unreadBody } from './http/unread-body.js';
import { utf8Url } from './http/text.js';
import { createMailer, type Mailer } from './mail.js';
import type { Engine, Module } from './module.js';
import { buildOpenApiDocument, type DocumentInfo } from './openapi/document.js';
import { docsRoutes } from './openapi/docs-routes.js';
import { checkLinkedPages, referencePages, referenceRoutes } from './openapi/reference-pages.js';
import { requestId, requestIdOf } from './http/request-id.js';
import { requestLog } from './http/request-log.js';
import { crossOrigin, securityHeaders } from './http/security.js';
import { logEvent, rootLogger, type LogEvent, type Logger } from './log/log.js';
import { createRateLimiting, type RateLimiting } from './ratelimit/setup.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { compileDefinitions } from './resource/compile.js';
import { loadDefinitionDir, loadDefinitionFile } from './resource/load.js';
import { crudRoutes } from './resource/routes.js';
import { routeMatchOf, type Route } from './route.js';
import { RouteTable } from './routing/route-table.js';
import { allowedMethods } from './routing/allowed-methods.js';
import { routesByPrefix } from './routing/by-prefix.js';
import { ListCursors } from './resource/cursor.js';
import { createIdempotency } from './idempotency/guard.js';
import { ResourceService } from './resource/service.js';
import { TotalCache } from './resource/total-cache.js';
import { foldEvery } from './db/change-marks.js';
import { databaseBroadcast } from './db/broadcast.js';
import type { Knex } from 'knex';

export interface AppOptions {
  config: Config;
  db: Knex;
  /** Folders of *.yaml definitions. */
  resourceDirs: string[];
  /** Hand-written modules: their routes, definition files and documentation. */
  modules?: Module[];
  /** Roles, the permissions each grants, and the owner rule. */
  roles: RoleTable;
  /** Who is asking; made once the engine is built (it may need its database and configuration). */
  authenticator(engine: Engine): Authenticator;
  /** Rate limits: tiers, method and endpoint limits (ratelimit/policy.ts). */
  limitsFile: string;
  /** Where a 500's error goes; a line of `logger` (with the request id) by default. */
  logError?: (err: unknown) => void;
  /** Events worth a line in the log (a Redis outage); one JSON line on stdout by default. */
  log?: LogEvent;
  /** Request lines and errors; the process's logger (stdout) by default, at the configured LOG_LEVEL. */
  logger?: Logger;
  /** Outgoing mail; by default SMTP_URL's server, or one log line per message. */
  mailer?: Mailer;
  /** What the OpenAPI document says of the application (its title, version, how to sign in); neutral words by default. */
  documentInfo?: DocumentInfo;
  /**
   * A folder of Markdown reference pages, served read-only at /docs/{page}.md (the files it holds
   * at start); the document's intro links those `documentInfo.pages` names. None by default.
   */
  docsDir?: string;
}

export interface App {
  koa: Koa;
  engine: Engine;
  openapi: Record<string, unknown>;
  /** Every declared route, in the order the router tries them. */
  routes: Route[];
  rateLimiting: RateLimiting;
  /** Its Prometheus metrics when METRICS_PORT is set (served apart from the API: metrics/server.ts). */
  metrics?: Metrics;
  /** Resolves when the services the app counts on are connected (or have been waited for long enough). */
  ready(): Promise<void>;
  /** Whether a path is served without a caller, as its routes declare (any method). */
  isPublic(path: string): boolean;
  /** From now on the readiness probe answers 503: a graceful shutdown has begun. */
  drain(): void;
  /** Closes what the app opened itself (the rate-limit store); the database is the caller's. */
  close(): Promise<void>;
}

const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'HPE_INVALID_EOF_STATE']);

function isClientGone(err: any): boolean {
  return CLIENT_GONE.has(err?.code) || err?.message === 'aborted';
}

/** How often a process folds the change rows of marked tables (engine/db/change-marks.ts). */
const FOLD_EVERY_MS = 2000;

/** How long start-up waits for Redis before serving without it (fail-open). */
const STORE_READY_TIMEOUT_MS = 2000;

export function createApp(options: AppOptions): App {
  const { config, db } = options;
  const { roles } = options;
  const modules = options.modules ?? [];
  const sources = [
    ...options.resourceDirs.flatMap((dir) => loadDefinitionDir(dir)),
    ...modules.flatMap((m) => (m.definitions ?? []).map((file) => loadDefinitionFile(file))),
  ];
  // Models of this app are bound to this app's database (tests run several apps in one process).
  class BoundModel extends Model {}
  BoundModel.knex(db);
  const registry = compileDefinitions(sources, { permissions: roles.permissions, owner: roles.owner, baseModel: BoundModel });
  // Signed with the token secret (and the previous one after a rotation): every instance reads every other's cursors.
  const cursors = new ListCursors([config.jwt.secret, config.jwt.previousSecret]);
  // Record versions (ETags) are salted with a key of the same secret: a tag reveals nothing of the database.
  const versionSalt = createHmac('sha256', config.jwt.secret).update('record versions').digest('hex').slice(0, 32);
  for (const resource of registry.values()) resource.versionSalt = versionSalt;
  // Totals kept while their table's change mark stands (one cache per app: tests run several).
  const totals = new TotalCache(db);
  const stopFolding = foldEvery(db, FOLD_EVERY_MS, () => totals.anyMarked(), (err) => (options.log ?? logEvent)('warn', 'change marks: folding failed', { error: String((err as Error)?.message ?? err) }));
  const services = new Map([...registry.values()].map((r) => [r.name, new ResourceService(db, r, cursors, config.bulkMaxItems, totals)]));
  const broadcast = databaseBroadcast(db, config.databaseSchema ?? '', options.log ?? logEvent);
  const engine: Engine = { config, db, registry, services, roles, mailer: options.mailer ?? createMailer(config), broadcast };
  const authenticator = options.authenticator(engine);
  const metrics = config.metrics ? createMetrics(db) : undefined;

  // Case-sensitive like the paths the authentication middleware lets through without a token:
  // /API/employee must not reach a route by another spelling.
  const router = new Router({ sensitive: true });
  // Idempotency keys in the database, or Redis when configured (shared by every process and instance).
  const idempotency = createIdempotency(config, db, options.log ?? logEvent);
  const table = new RouteTable(router, idempotency.guard);
  const serving: ServingState = { draining: false };
  table.add(...healthRoutes(db, config.healthTimeoutMs, serving, broadcast));
  // Modules first: their fixed paths (/api/tags/getByName) must win over a generated /:id.
  for (const module of modules) table.add(...module.routes(engine));
  for (const service of services.values()) if (service.resource.routes) table.add(...crudRoutes(service));
  const rateLimiting = createRateLimiting({
    config,
    limitsFile: options.limitsFile,
    registry,
    roles: roles.grants.keys(),
    // A route counted as anonymous (a share link) ignores the token: it buys no allowance there.
    identify: (ctx) => (routeMatchOf(ctx)?.anonymous ? undefined : authenticator.holder(ctx)),
    log: options.log ?? logEvent,
    onRefused: metrics?.rateLimitRefused,
  });
  const openapi = buildOpenApiDocument(engine, table.routes, modules, rateLimiting.productTable, options.documentInfo);
  const pages = referencePages(options.docsDir);
  checkLinkedPages(Object.values(options.documentInfo?.pages ?? {}), pages, options.docsDir);
  table.add(...docsRoutes(openapi), ...referenceRoutes(pages));
  const routes = routesByPrefix(router);

  const logger = (options.logger ?? rootLogger).child({}, { level: config.logLevel });
  const logError = (err: unknown, ctx?: Context, status = 500) => {
    if (options.logError) return options.logError(err);
    const reqId = ctx && requestIdOf(ctx);
    // A 503 is the database being away or slow, not a bug: a warning naming why, without a stack
    // (an outage answers many requests so; a stack each would bury the log).
    if (status !== 500) return logger.warn({ reqId, status, error: String((err as any)?.code ?? (err as Error)?.message ?? err) }, 'request not served');
    logger.error({ reqId, error: String((err as Error)?.stack ?? err) }, 'request failed');
  };
  const koa = new Koa();
  // Errors after the answer began (a streamed body failing, a client gone mid-transfer) reach
  // Koa, not the error middleware: a client that left is routine; anything else is logged once.
  koa.on('error', (err: any, ctx?: Context) => {
    if (!isClientGone(err)) logError(err, ctx);
  });
  // Outermost: once everything else has answered, it settles a request body the answer did not read.
  koa.use(unreadBody());
  koa.use(requestId());
  koa.use(table.middleware(routes.match));
  // Right after the route is known, outside everything that may answer: every status is counted.
  if (metrics) koa.use(metrics.middleware);
  koa.use(requestLog(logger));
  koa.use(securityHeaders());
  const definedHeaders = [...registry.values()].flatMap((r) => (r.organizationHeader ? [r.organizationHeader] : []));
  koa.use(crossOrigin(config.corsOrigins, definedHeaders));
  koa.use(errorMiddleware(logError, new Map(modules.flatMap((m) => Object.entries(m.notFoundHints ?? {})))));
  // The caller is identified before the limits count the request (they key a caller by it), and
  // refused only after, so that a request with bad credentials still counts against its address.
  koa.use(authenticator.identify);
  koa.use(rateLimiting.middleware);
  koa.use(utf8Url());
  koa.use(authenticator.authenticate((ctx) => routeMatchOf(ctx)!.public));
  koa.use(
    jsonBody(config.bodyLimit, config.json, (ctx) => {
      const route = routeMatchOf(ctx)!.route;
      // A DELETE's body is read only where its route declares one (a bulk delete's ids).
      return route && (route.body ?? (ctx.method === 'DELETE' ? 'none' : 'json'));
    }),
  );
  koa.use(routes);
  koa.use(allowedMethods());
  return {
    koa,
    engine,
    openapi,
    routes: table.routes,
    rateLimiting,
    metrics,
    isPublic: (path) => table.matchOf(routes.match, '', path).public,
    ready: async () => {
      await Promise.all([rateLimiting.store?.ready(STORE_READY_TIMEOUT_MS), idempotency.ready(STORE_READY_TIMEOUT_MS), broadcast.ready(STORE_READY_TIMEOUT_MS)]);
    },
    drain: () => {
      serving.draining = true;
    },
    close: async () => {
      stopFolding();
      await Promise.all([rateLimiting.store?.close(), idempotency.close(), broadcast.close()]);
    },
  };
}
