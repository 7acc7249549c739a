// Sessions: refreshing the token pair (single-use refresh tokens), checking an access token, and
// refusing access tokens of ended sessions on every route.
import type { Module } from '../../engine/module.js';
import { sessionRoutes } from './routes.js';

export const sessionModule: Module = {
  name: 'session',
  routes: sessionRoutes,
};
