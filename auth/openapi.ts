// STUB: replaced by the auth paths.
import type { OpenApiPaths } from '../engine/module.js';

export function authOpenApi(): OpenApiPaths {
  return {};
}
