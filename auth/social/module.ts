// Social login as a module of the app: sign-in with Google, GitHub, Microsoft and Facebook.
import type { Module } from '../../engine/module.js';
import { socialRoutes } from './routes.js';

export const socialModule: Module = {
  name: 'social',
  routes: socialRoutes,
};
