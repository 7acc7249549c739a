// Builds the Koa app: errors → authentication → JSON body → routes. Everything is compiled
// here, once: definitions, validators, routes and the OpenAPI document.
import Router from '@koa/router';
import Koa from 'koa';
import { Model } from 'objection';
import { authenticate } from '../auth/authenticate.js';
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
import { RESOURCES_DIR, ROLES_FILE } from './paths.js';
import { compileDefinitions } from './resource/compile.js';
import { loadDefinitionDir, loadDefinitionFile } from './resource/load.js';
import { registerResourceRoutes } from './resource/routes.js';
import { ResourceService } from './resource/service.js';
import type { Knex } from 'knex';

export interface AppOptions {
  config: Config;
  db: Knex;
  /** Folders of *.yaml definitions; the project's resources/ by default. */
  resourceDirs?: string[];
  modules?: Module[];
  rolesFile?: string;
  logError?: (err: unknown) => void;
  /** Outgoing mail; by default SMTP_URL's server, or one log line per message. */
  mailer?: Mailer;
}

export interface App {
  koa: Koa;
  engine: Engine;
  openapi: Record<string, unknown>;
}

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
  for (const service of services.values()) if (service.resource.routes) registerResourceRoutes(router, service);
  for (const module of modules) module.register(router, engine);
  const openapi = buildOpenApiDocument(engine, modules);
  registerDocs(router, openapi);

  const koa = new Koa();
  koa.use(errorMiddleware(options.logError));
  koa.use(authenticate(engine.keys, roles, sessionCheck(db, config.sessionCheckTtlMs)));
  koa.use(jsonBody(config.bodyLimit));
  koa.use(router.routes());
  koa.use(router.allowedMethods());
  return { koa, engine, openapi };
}
