// Auth as a module of the app: its routes and their part of the OpenAPI document.
import type { Module } from '../engine/module.js';
import { authOpenApi } from './openapi.js';
import { registerAuthRoutes } from './routes.js';

export const authModule: Module = {
  name: 'auth',
  // Signing in and registering need no token; /api/auth/authenticated answers true/false itself.
  publicPaths: [/^\/api\/auth\/(login|register)\/?$/],
  register(router, engine) {
    registerAuthRoutes(router, engine);
  },
  openapi: () => authOpenApi(),
};
