// GET /api/tags/getByName/{name} and /api/tags/getByName?name=: Ever Gauzy's older way of
// finding a tag by its name, kept for its clients and marked deprecated in favour of the list
// filter /api/tags?where[name]=…. tag.yaml stays the tag's definition.
import type { Engine, Module } from '../../engine/module.js';
import type { ResourceService } from '../../engine/resource/service.js';
import { tagByNameRoutes } from './routes.js';

const TAG = 'tag';

function serviceOf(engine: Engine): ResourceService {
  const service = engine.services.get(TAG);
  if (!service) throw new Error(`The tag-by-name module needs the ${TAG} resource: is tag.yaml loaded?`);
  return service;
}

export const tagByNameModule: Module = {
  name: 'tag-by-name',
  routes: (engine) => tagByNameRoutes(serviceOf(engine)),
};
