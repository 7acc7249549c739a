// Sessions: refreshing the token pair (single-use refresh tokens), checking an access token, and
// refusing access tokens of ended sessions on every route.
import type { Module } from '../../engine/module.js';
import { sessionCheck } from './live.js';
import { sessionOpenApi } from './openapi.js';
import { registerSessionRoutes } from './routes.js';

export const sessionModule: Module = {
  name: 'session',
  register(router, engine) {
    // The bearer middleware is built from the keys alone: this is how it reaches the database.
    engine.keys.liveSession = sessionCheck(engine.db, engine.config.sessionCheckTtlMs);
    registerSessionRoutes(router, engine);
  },
  openapi: () => sessionOpenApi(),
};
