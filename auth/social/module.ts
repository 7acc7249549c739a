// Social login as a module of the app: sign-in with Google, GitHub, Microsoft and Facebook.
import type { Module } from '../../engine/module.js';
import { socialOpenApi } from './openapi.js';
import { registerSocialRoutes } from './routes.js';

export const socialModule: Module = {
  name: 'social',
  // Starting a social login and its callback are how a signed-out user gets a token.
  publicPaths: [/^\/api\/auth\/(google|github|microsoft|facebook)(\/callback)?\/?$/],
  register(router, engine) {
    registerSocialRoutes(router, engine);
  },
  openapi: () => socialOpenApi(),
};
