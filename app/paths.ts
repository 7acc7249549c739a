// Folders of the project, independent of the working directory. Compiled, this file is
// dist/app/paths.js: the definitions, config/ and docs/ that teams edit are still read from the
// repository's folders (a change needs a restart, not a build), and so are the migrations that
// the build did not compile: dist/ holds the compiled ones, and a migration written since (by
// `npm run db:migration`) is applied from its source, loaded through tsx.
import { fileURLToPath } from 'node:url';
import type { MigrationFolder } from '../engine/db/migrations.js';

const compiled = import.meta.url.endsWith('.js');
const root = new URL(compiled ? '../../' : '../', import.meta.url);

export const PROJECT_ROOT = fileURLToPath(root);
export const RESOURCES_DIR = fileURLToPath(new URL('resources', root));
/** The repository's migrations: where `npm run db:migration` writes, and what the build compiles. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('resources/migrations', root));
/**
 * Where the service finds its migrations: compiled, dist's, and the repository's sources of those
 * written since the build.
 */
export const APP_MIGRATIONS: MigrationFolder = compiled ? { compiled: fileURLToPath(new URL('../resources/migrations', import.meta.url)), sources: MIGRATIONS_DIR } : MIGRATIONS_DIR;
export const ROLES_FILE = fileURLToPath(new URL('config/roles.yaml', root));
export const LIMITS_FILE = fileURLToPath(new URL('config/limits.yaml', root));
/** The reference pages, served read-only at /docs/{page}.md (the OpenAPI document's intro links them). */
export const DOCS_DIR = fileURLToPath(new URL('docs', root));
