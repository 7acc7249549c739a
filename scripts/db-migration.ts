// `npm run db:migration -- <name>`: migrate the configured database (the same one, read from the
// same environment, as `npm start` and `npm run db:migrate`), compare it with every definition,
// and write resources/migrations/<timestamp>_<name>.ts with what the definitions need and the
// schema lacks, or say that there is no difference. The migration is written, not applied:
// read it, then `npm run db:migrate` (or `npm start`) applies it.
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../engine/config.js';
import { DataDirLockedError, ensureSchema, openDatabase } from '../engine/db.js';
import { migrate, migrationFolders, MissingMigrationsError } from '../engine/migrations.js';
import { MIGRATIONS_DIR, PROJECT_ROOT, RESOURCES_DIR } from '../engine/paths.js';
import { DefinitionError } from '../engine/resource/load.js';
import { diffSchema } from '../engine/schema/diff.js';
import { generateMigration } from '../engine/schema/generate.js';
import { loadRegistry } from '../engine/schema/registry.js';
import { modules } from '../resources/modules.js';

/** The table tenantId points at, as resources/migration-helpers.ts binds recordColumns. */
const TENANT_TABLE = 'tenant';

class UsageError extends Error {}

function migrationName(args: string[]): string {
  const name = args.filter((a) => a !== '--').join('_').trim();
  if (!name) throw new UsageError('Name the migration: npm run db:migration -- <name> (e.g. add_project_budget).');
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  if (!slug) throw new UsageError(`"${name}" has no letters or digits to name a migration with.`);
  return slug;
}

/** YYYYMMDDhhmmss, UTC. */
const stamp = (date: Date) => date.toISOString().replace(/[-:T]/g, '').slice(0, 14);

/**
 * Now, or one second after the newest migration when that one is dated later (migrations run in
 * name order: a new one must sort last).
 */
function nextTimestamp(dir: string, now = new Date()): string {
  const newest = readdirSync(dir)
    .map((f) => /^(\d{14})_/.exec(f)?.[1])
    .filter((s): s is string => Boolean(s))
    .sort()
    .pop();
  if (!newest || stamp(now) > newest) return stamp(now);
  const [y, mo, d, h, mi, s] = [0, 4, 6, 8, 10, 12].map((at, i) => Number(newest.slice(at, at + (i === 0 ? 4 : 2))));
  return stamp(new Date(Date.UTC(y, mo - 1, d, h, mi, s + 1)));
}

async function main(args: string[]): Promise<number> {
  const name = migrationName(args);
  const config = loadConfig();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
  });
  try {
    if (config.databaseUrl) await ensureSchema(database.knex, config.databaseSchema);
    const applied = await migrate(database.knex, migrationFolders(config.extraResourceDirs));
    if (applied.length) console.log(`Applied first: ${applied.join(', ')}`);
    const registry = loadRegistry([RESOURCES_DIR, ...config.extraResourceDirs], modules);
    const differences = await diffSchema(database.knex, registry, { tenantTable: TENANT_TABLE });
    if (differences.length === 0) {
      console.log('No difference between the definitions and the migrated schema: no migration written.');
      return 0;
    }
    const file = path.join(MIGRATIONS_DIR, `${nextTimestamp(MIGRATIONS_DIR)}_${name}.ts`);
    writeFileSync(file, generateMigration(differences, { title: path.basename(file, '.ts'), helpers: '../migration-helpers.js' }));
    console.log(`${differences.length} difference(s):\n  ${differences.map((d) => d.message).join('\n  ')}`);
    console.log(`\nWrote ${path.relative(PROJECT_ROOT, file)}. Read it, then apply it with npm run db:migrate (or npm start).`);
    return 0;
  } finally {
    await database.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  const known = [UsageError, ConfigError, DataDirLockedError, DefinitionError, MissingMigrationsError].some((kind) => err instanceof kind);
  console.error(known ? (err as Error).message : err);
  process.exitCode = 1;
}
