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

/**
 * Each importable resource with the names it takes in /api/import/<name>, its own name first,
 * then its one-segment aliases; each name resolved as the template route resolves it, so that a
 * route per name answers exactly as the template did.
 */
export function importableNames(engine: Engine): Array<{ resource: CompiledResource; names: string[] }> {
  return importableResources(engine).map((resource) => {
    const spellings = [resource.name, ...resource.paths.filter((p) => !p.includes('/') && p !== resource.name)];
    return { resource, names: spellings.filter((name) => resourceNamed(engine, name) === resource) };
  });
}
