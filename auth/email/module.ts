// The email part of auth: verifying the account's address, checking whether an address has an
// account, and changing the address. Codes travel by mail (engine.mailer).
import type { Module } from '../../engine/module.js';
import { registerChangeRoutes } from './change.js';
import { registerCheckRoutes } from './check.js';
import { emailOpenApi } from './openapi.js';
import { registerVerifyRoutes } from './verify.js';

export const emailModule: Module = {
  name: 'email',
  register(router, engine) {
    registerVerifyRoutes(router, engine);
    registerCheckRoutes(router, engine);
    registerChangeRoutes(router, engine);
  },
  openapi: () => emailOpenApi(),
};
