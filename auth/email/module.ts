// The email part of auth: verifying the account's address, checking whether an address has an
// account, and changing the address. Codes travel by mail (engine.mailer).
import type { Module } from '../../engine/module.js';
import { changeRoutes } from './change.js';
import { checkRoutes } from './check.js';
import { verifyRoutes } from './verify.js';

export const emailModule: Module = {
  name: 'email',
  routes: (engine) => [...verifyRoutes(engine), ...checkRoutes(engine), ...changeRoutes(engine)],
};
