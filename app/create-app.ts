// The composition root: this application is the engine (engine/) given the auth modules (auth/),
// the resource folders and hand-written modules (resources/), the configuration files
// (config/roles.yaml, config/limits.yaml) and the reference pages (docs/). `npm start`
// (start.ts), the tools and the tests build it here.
import { tokenAuthenticator } from '../auth/authenticate.js';
import { authModules } from '../auth/modules.js';
import { loadRoles } from '../auth/roles.js';
import { createApp, type App, type AppOptions } from '../engine/app.js';
import type { Module } from '../engine/module.js';
import type { Registry } from '../engine/resource/compiled.js';
import { loadRegistry } from '../engine/schema/registry.js';
import type { DocumentInfo } from '../engine/openapi/document.js';
import pkg from '../package.json' with { type: 'json' };
import { DOCS_DIR, LIMITS_FILE, RESOURCES_DIR, ROLES_FILE } from './paths.js';

/** How the OpenAPI document introduces this application. */
const DOCUMENT_INFO: DocumentInfo = {
  title: 'Workforce Management API',
  version: pkg.version,
  summary: 'Multi-tenant workforce and time-tracking API.',
  signIn: 'Sign in with `POST /api/auth/login` and send `Authorization: Bearer <token>`',
  tokenOrigin: 'The access token from POST /api/auth/login.',
  // docs/*.md, served at /docs/{page}.md: the intro's links.
  pages: { conventions: 'api-conventions', authentication: 'authentication', queryLanguage: 'query-language', rateLimits: 'rate-limits' },
};

export interface ProjectAppOptions extends Omit<AppOptions, 'resourceDirs' | 'modules' | 'roles' | 'authenticator' | 'limitsFile'> {
  /** Folders of *.yaml definitions; resources/ by default. */
  resourceDirs?: string[];
  /** Hand-written modules besides auth's (resources/modules.ts lists the application's); none by default. */
  modules?: Module[];
  /** config/roles.yaml by default. */
  rolesFile?: string;
  /** config/limits.yaml by default. */
  limitsFile?: string;
}

/** The application's app: auth's modules first (its fixed paths), then the given ones. */
export function createProjectApp(options: ProjectAppOptions): App {
  const { resourceDirs, modules, rolesFile, limitsFile, ...rest } = options;
  return createApp({
    ...rest,
    resourceDirs: resourceDirs ?? [RESOURCES_DIR],
    modules: [...authModules, ...(modules ?? [])],
    roles: loadRoles(rolesFile ?? ROLES_FILE),
    authenticator: tokenAuthenticator,
    limitsFile: limitsFile ?? LIMITS_FILE,
    documentInfo: DOCUMENT_INFO,
    docsDir: rest.docsDir ?? DOCS_DIR,
  });
}

/** The application's definitions compiled as its app compiles them, for tools without an app (migrations). */
export function projectRegistry(resourceDirs: string[], modules: Module[], rolesFile = ROLES_FILE): Registry {
  return loadRegistry(resourceDirs, [...authModules, ...modules], loadRoles(rolesFile));
}
