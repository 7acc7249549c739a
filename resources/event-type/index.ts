// Event types as a hand-written module: event-type.yaml gives the model, validators and
// schemas (no generated routes); routes.ts and openapi.ts add the rest.
import { fileURLToPath } from 'node:url';
import type { Engine, Module } from '../../engine/module.js';
import type { ResourceService } from '../../engine/resource/service.js';
import { eventTypeOpenApi } from './openapi.js';
import { registerEventTypeRoutes } from './routes.js';

export const EVENT_TYPE = 'event-type';

function serviceOf(engine: Engine): ResourceService {
  const service = engine.services.get(EVENT_TYPE);
  if (!service) throw new Error(`The ${EVENT_TYPE} module needs its definition compiled: is event-type.yaml loaded?`);
  return service;
}

export const eventTypeModule: Module = {
  name: EVENT_TYPE,
  definitions: [fileURLToPath(new URL('./event-type.yaml', import.meta.url))],
  register(router, engine) {
    registerEventTypeRoutes(router, serviceOf(engine));
  },
  openapi(engine) {
    return eventTypeOpenApi(serviceOf(engine).resource);
  },
};
