// Every part of auth, as modules of the app: registration and login, sessions (refresh tokens,
// token checks), email verification and change, passwords and the account, social login.
import type { Module } from '../engine/module.js';
import { emailModule } from './email/module.js';
import { authModule } from './module.js';
import { passwordModule } from './password/module.js';
import { sessionModule } from './session/module.js';
import { socialModule } from './social/module.js';

export const authModules: Module[] = [authModule, sessionModule, emailModule, passwordModule, socialModule];
