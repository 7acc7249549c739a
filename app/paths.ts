// Folders of the project, independent of the working directory.
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const RESOURCES_DIR = fileURLToPath(new URL('../resources', import.meta.url));
export const MIGRATIONS_DIR = fileURLToPath(new URL('../resources/migrations', import.meta.url));
export const ROLES_FILE = fileURLToPath(new URL('../config/roles.yaml', import.meta.url));
export const LIMITS_FILE = fileURLToPath(new URL('../config/limits.yaml', import.meta.url));
