// How long each migration takes on a new embedded data folder, for `npm run bench:start`: the
// compiled migrations (dist/, what `npm start` applies) on PGlite with the service's settings
// (engine/db/embedded.ts), each one's `up` timed apart from knex's bookkeeping around it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { openDatabase } from '../../engine/db/database.js';
import { FolderMigrationSource } from '../../engine/db/migrations.js';
import { setLogLevel } from '../../engine/log/log.js';
import { DIST } from '../../scripts/dist.js';

type Migration = { name: string; file: string };

/** The migrations' `up`, each timed into `times` (ms by name). */
class TimedMigrations extends FolderMigrationSource {
  constructor(folders: string[], private readonly times: Map<string, number>) {
    super(folders);
  }

  override async getMigration(migration: Migration): Promise<Knex.Migration> {
    const loaded = await super.getMigration(migration);
    return {
      ...loaded,
      up: async (knex: Knex) => {
        const began = performance.now();
        await loaded.up(knex);
        this.times.set(migration.name, Math.round(performance.now() - began));
      },
    };
  }
}

/** One pass on a new data folder (created, migrated, removed): ms per migration, in order. */
export async function migrationsOneByOne(): Promise<Map<string, number>> {
  setLogLevel('silent');
  const work = mkdtempSync(path.join(tmpdir(), 'bench-migrations-'));
  const times = new Map<string, number>();
  try {
    const database = await openDatabase({ dataDir: path.join(work, 'data') });
    try {
      await database.knex.migrate.latest({ migrationSource: new TimedMigrations([path.join(DIST, 'resources', 'migrations')], times) });
    } finally {
      await database.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return times;
}
