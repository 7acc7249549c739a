// Auth as a module of the app: registering and signing in (auth/routes.ts).
import type { Module } from '../engine/module.js';
import { authRoutes } from './routes.js';

export const authModule: Module = {
  name: 'auth',
  routes: authRoutes,
};
