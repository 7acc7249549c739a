// STUB: replaced by the full generator.
import type { Engine, Module } from '../module.js';
import pkg from '../../package.json' with { type: 'json' };

export function buildOpenApiDocument(engine: Engine, modules: Module[]): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const m of modules) Object.assign(paths, m.openapi?.(engine) ?? {});
  return { openapi: '3.0.3', info: { title: 'Workforce API', version: pkg.version }, paths, registry: engine.registry.size };
}
