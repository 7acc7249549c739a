// Sessions: refreshing the token pair (single-use refresh tokens), checking an access token, and
// refusing access tokens of ended sessions on every route.
import type { Module } from '../../engine/module.js';
import { sessionOpenApi } from './openapi.js';
import { registerSessionRoutes } from './routes.js';

export const sessionModule: Module = {
  name: 'session',
  // A refresh needs the refresh token only; /api/auth/authenticated answers true/false itself.
  publicPaths: [/^\/api\/auth\/(refresh-token|authenticated)\/?$/],
  register(router, engine) {
    registerSessionRoutes(router, engine);
  },
  openapi: () => sessionOpenApi(),
};
