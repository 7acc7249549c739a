// SKELETON (issue 6): the owner of import/ replaces this file.
import type Router from '@koa/router';
import type { Engine, OpenApiPaths, OwnBody } from '../../../engine/module.js';

/** The import route reads its own body (multipart, CSV or JSON, larger than the JSON limit). */
export const IMPORT_OWN_BODIES: OwnBody[] = [{ method: 'POST', path: /^\/api\/import\/[^/]+\/?$/ }];

export function registerImportRoutes(_router: Router, _engine: Engine): void {}

export function importOpenApi(_engine: Engine): OpenApiPaths {
  return {};
}
