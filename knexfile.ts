// Configuration of the knex CLI (`npm run db:migrate`; `npm run knex -- migrate:status`, …): the
// same database, settings and migration folders as `npm start`, read from the same environment.
import knex, { type Knex } from 'knex';
import { loadConfig } from './engine/config/config.js';
import { configuredDatabase, ensureSchema, knexConfig, lockDataDir, resolvePooler } from './engine/db/database.js';
import { APP_MIGRATIONS } from './app/paths.js';
import { FolderMigrationSource, migrationFolders } from './engine/db/migrations.js';

export default async function knexfile(): Promise<Knex.Config> {
  const config = loadConfig();
  const options = await resolvePooler(configuredDatabase(config));
  if (!config.databaseUrl) {
    // The embedded database is one process's: a running server keeps the CLI out (and the other way
    // round). The lock is released when the CLI exits.
    await lockDataDir(config.dataDir);
  } else if (config.databaseSchema) {
    const db = knex(await knexConfig(options));
    await ensureSchema(db, config.databaseSchema).finally(() => db.destroy());
  }
  return { ...(await knexConfig(options)), migrations: { migrationSource: new FolderMigrationSource(migrationFolders(APP_MIGRATIONS, config.extraResourceDirs)) } };
}
