// Which resources an import writes, and the create each row goes through: the resource's own
// create, as POST /api/{resource} runs it. A resource whose records the API does not create
// (user: registration makes them; role: fixed per tenant) cannot be imported either.
import { HttpError } from '../../../engine/errors.js';
import type { Engine } from '../../../engine/module.js';
import type { CompiledResource } from '../../../engine/resource/compiled.js';
import type { ResourceService } from '../../../engine/resource/service.js';
import { resourceNamed } from '../exchange.js';

/**
 * Resources without generated routes whose module creates records through the engine's create
 * (an event type without employeeId is the caller's own there and here: its definition says so).
 */
const MODULE_CREATES = new Set(['event-type']);

export interface ImportTarget {
  resource: CompiledResource;
  service: ResourceService;
}

export const isImportable = (resource: CompiledResource) => resource.routes || MODULE_CREATES.has(resource.name);

/** The resource named in the path, if the API creates its records; 404 otherwise. */
export function importTarget(engine: Engine, name: string): ImportTarget {
  const resource = resourceNamed(engine, name);
  const service = engine.services.get(resource.name);
  if (!isImportable(resource) || !service) {
    throw new HttpError(404, `${resource.name} records cannot be imported: the API does not create them`);
  }
  return { resource, service };
}

/** Every importable resource, for the OpenAPI document. */
export function importableResources(engine: Engine): CompiledResource[] {
  return [...engine.registry.values()].filter((r) => isImportable(r) && engine.services.has(r.name));
}

/** The names /api/import/{resource} takes: each importable resource's name and its one-segment aliases. */
export function importableNames(engine: Engine): string[] {
  const names = new Set<string>();
  for (const resource of importableResources(engine)) {
    names.add(resource.name);
    for (const path of resource.paths) if (!path.includes('/')) names.add(path);
  }
  return [...names].sort();
}
