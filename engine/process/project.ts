// What the process model (main.ts) needs of an application: how to build its app on an open
// database, and where its migrations are. The application's entry (app/start.ts in this
// repository) hands one to runProcess; the engine knows no folder of its own.
import type { Knex } from 'knex';
import type { App } from '../app.js';
import type { Config } from '../config/config.js';
import type { MigrationFolder } from '../db/migrations.js';
import type { LogEvent } from '../log/log.js';

export interface Project {
  /** The app a serving process (or a cluster's preparation) serves, built on an open database. */
  createApp(config: Config, db: Knex, log: LogEvent): App;
  /** The folders of migrations to apply, in order. */
  migrationFolders(config: Config): MigrationFolder[];
}
