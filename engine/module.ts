// What the app hands to each part that adds routes: generated resources, auth, and
// hand-written modules (resources/*/index.ts) all see the same compiled engine.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { RoleTable } from './caller.js';
import type { Config } from './config/config.js';
import type { LogMask } from './http/request-log.js';
import type { Mailer } from './mail.js';
import type { Registry } from './resource/compiled.js';
import type { ResourceService } from './resource/service.js';

export interface Engine {
  config: Config;
  db: Knex;
  registry: Registry;
  /** One service per compiled resource, by resource name. */
  services: Map<string, ResourceService>;
  roles: RoleTable;
  mailer: Mailer;
}

/** OpenAPI path items keyed by path (`/api/event-type/{id}`). */
export type OpenApiPaths = Record<string, Record<string, unknown>>;

export interface Module {
  name: string;
  /** Definition files compiled with resources/*.yaml; mark them `routes: false` to write the routes here. */
  definitions?: string[];
  /**
   * Routes that read their own request body (multipart uploads, CSV imports): the JSON body parser
   * leaves these alone, and the route answers 415 itself for a content type it does not take.
   */
  ownBodies?: OwnBody[];
  /**
   * Paths of this module's routes served without a caller (sign-in, a share link a customer opens):
   * authentication lets them through. Matched against the whole request path, whatever the method.
   */
  publicPaths?: RegExp[];
  /** Paths that carry a secret (a share link's token in /api/public/…): masked in request log lines. */
  logMasks?: LogMask[];
  register(router: Router, engine: Engine): void;
  openapi?(engine: Engine): OpenApiPaths;
  /** Named schemas the module's paths refer to as `#/components/schemas/<name>`. */
  openapiSchemas?(engine: Engine): Record<string, object>;
}

export interface OwnBody {
  method: string;
  /** Matched against the whole request path. */
  path: RegExp;
}
