// Folders of the project, independent of the working directory. Compiled, this file is
// dist/app/paths.js: the definitions, config/ and docs/ that teams edit are still read from the
// repository's folders (a change needs a restart, not a build), while the migrations are the
// compiled ones next to it in dist/ (plain node cannot load the .ts ones).
import { fileURLToPath } from 'node:url';

const compiled = import.meta.url.endsWith('.js');
const root = new URL(compiled ? '../../' : '../', import.meta.url);

export const PROJECT_ROOT = fileURLToPath(root);
export const RESOURCES_DIR = fileURLToPath(new URL('resources', root));
export const MIGRATIONS_DIR = fileURLToPath(new URL('../resources/migrations', import.meta.url));
export const ROLES_FILE = fileURLToPath(new URL('config/roles.yaml', root));
export const LIMITS_FILE = fileURLToPath(new URL('config/limits.yaml', root));
/** The reference pages, served read-only at /docs/{page}.md (the OpenAPI document's intro links them). */
export const DOCS_DIR = fileURLToPath(new URL('docs', root));
