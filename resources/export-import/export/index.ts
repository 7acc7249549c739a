// SKELETON (issue 6): the owner of export/ replaces this file.
import type Router from '@koa/router';
import type { Engine, OpenApiPaths } from '../../../engine/module.js';

export function registerExportRoutes(_router: Router, _engine: Engine): void {}

export function exportOpenApi(_engine: Engine): OpenApiPaths {
  return {};
}
