// Passwords and the account: password reset (by email, then with the emailed token), password
// change, the signed-in user (GET/PUT /api/user/me) and renaming the caller's tenant.
import type { Module } from '../../engine/module.js';
import { accountRoutes } from './account-routes.js';
import { changePasswordRoute } from './change-route.js';
import { resetRoutes } from './reset-routes.js';

export const passwordModule: Module = {
  name: 'password',
  routes: (engine) => [...resetRoutes(engine), changePasswordRoute(engine), ...accountRoutes(engine)],
  // Clients looking for users to make employees of: there is no list of them.
  notFoundHints: {
    '/api/user': 'the signed-in user is GET /api/user/me, and an admin adds a user to the tenant with POST /api/auth/register and the admin\'s token (the answer is the user, with its id)',
  },
};
