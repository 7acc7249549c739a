// What the app hands to each part that adds routes: generated resources, auth, and
// hand-written modules (resources/*/index.ts) all see the same compiled engine.
import type { Knex } from 'knex';
import type { RoleTable } from './caller.js';
import type { Config } from './config/config.js';
import type { Broadcast } from './db/broadcast.js';
import type { Mailer } from './mail.js';
import type { Registry } from './resource/compiled.js';
import type { ResourceService } from './resource/service.js';
import type { Route } from './route.js';

export interface Engine {
  config: Config;
  db: Knex;
  registry: Registry;
  /** One service per compiled resource, by resource name. */
  services: Map<string, ResourceService>;
  roles: RoleTable;
  mailer: Mailer;
  /** Messages to every process serving the database, each confirmed (db/broadcast.ts). */
  broadcast: Broadcast;
}

/** OpenAPI path items keyed by path (`/api/event-type/{id}`). */
export type OpenApiPaths = Record<string, Record<string, unknown>>;

export interface Module {
  name: string;
  /** Definition files compiled with resources/*.yaml; mark them `routes: false` to write the routes here. */
  definitions?: string[];
  /** The module's routes, each declared once (engine/route.ts): how they are served, checked and documented. */
  routes(engine: Engine): Route[];
  /** Named schemas the module's paths refer to as `#/components/schemas/<name>`. */
  openapiSchemas?(engine: Engine): Record<string, object>;
  /**
   * Paths the module does not serve that clients still try, each with where to go instead: their
   * 404 (`Cannot GET <path>`) goes on to say it.
   */
  notFoundHints?: Record<string, string>;
}
