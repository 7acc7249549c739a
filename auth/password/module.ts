// Passwords and the account: password reset (by email, then with the emailed token), password
// change, the signed-in user (GET/PUT /api/user/me) and renaming the caller's tenant.
import type { Module } from '../../engine/module.js';
import { registerAccountRoutes } from './account-routes.js';
import { registerChangePassword } from './change-route.js';
import { passwordOpenApi } from './openapi.js';
import { registerResetRoutes } from './reset-routes.js';

export const passwordModule: Module = {
  name: 'password',
  // A password reset is for a signed-out user.
  publicPaths: [/^\/api\/auth\/(reset-password|request-password)\/?$/],
  register(router, engine) {
    registerResetRoutes(router, engine);
    registerChangePassword(router, engine);
    registerAccountRoutes(router, engine);
  },
  openapi: () => passwordOpenApi(),
};
