// The email part of auth: verifying the account's address, checking whether an address has an
// account, and changing the address. Codes travel by mail (engine.mailer).
import type { Module } from '../../engine/module.js';
import { registerChangeRoutes } from './change.js';
import { registerCheckRoutes } from './check.js';
import { emailOpenApi } from './openapi.js';
import { registerVerifyRoutes } from './verify.js';

export const emailModule: Module = {
  name: 'email',
  // Verifying with the mailed code, and asking whether an address has an account, need no token.
  publicPaths: [/^\/api\/auth\/email\/verify\/code\/?$/, /^\/api\/email-check\/validate\/?$/],
  register(router, engine) {
    registerVerifyRoutes(router, engine);
    registerCheckRoutes(router, engine);
    registerChangeRoutes(router, engine);
  },
  openapi: () => emailOpenApi(),
};
