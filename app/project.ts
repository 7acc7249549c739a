// What the process model (engine/process/) runs: this application's app, on resources/ and every
// EXTRA_RESOURCES_DIR, with their migrations.
import { migrationFolders } from '../engine/db/migrations.js';
import type { Project } from '../engine/process/project.js';
import { modules } from '../resources/modules.js';
import { createProjectApp } from './create-app.js';
import { APP_MIGRATIONS, RESOURCES_DIR } from './paths.js';

export const project: Project = {
  createApp: (config, db, log) => createProjectApp({ config, db, resourceDirs: [RESOURCES_DIR, ...config.extraResourceDirs], modules, log }),
  migrationFolders: (config) => migrationFolders(APP_MIGRATIONS, config.extraResourceDirs),
};
