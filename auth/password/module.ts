// Passwords and the account: password reset (by email, then with the emailed token), password
// change, the signed-in user (GET/PUT /api/user/me) and renaming the caller's tenant.
import type { Module } from '../../engine/module.js';
import { accountRoutes } from './account-routes.js';
import { changePasswordRoute } from './change-route.js';
import { resetRoutes } from './reset-routes.js';

export const passwordModule: Module = {
  name: 'password',
  routes: (engine) => [...resetRoutes(engine), changePasswordRoute(engine), ...accountRoutes(engine)],
};
