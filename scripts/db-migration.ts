// `npm run db:migration -- <name>`: compare every definition with the schema that the project's
// migrations make, and write resources/migrations/<timestamp>_<name>.ts with what the definitions
// need and the migrations lack, or say that there is no difference. The migrations are applied to
// a database of the tool's own, in memory, and never to the configured one: the tool runs while
// the server runs (the embedded data folder stays the server's), and what it writes is the next
// step after the migrations in the repository, whatever a database has applied. The migration is
// written, not applied: read it, then `npm start` (or `npm run db:migrate`) applies it. `--into
// <folder>` writes it elsewhere (the migrations/ folder of an EXTRA_RESOURCES_DIR whose
// definitions it is for).
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../engine/config/config.js';
import { openDatabase } from '../engine/db/database.js';
import { migrate, migrationFolders } from '../engine/db/migrations.js';
import { projectRegistry } from '../app/create-app.js';
import { MIGRATIONS_DIR, PROJECT_ROOT, RESOURCES_DIR } from '../app/paths.js';
import { DefinitionError } from '../engine/resource/load.js';
import { diffSchema } from '../engine/schema/diff.js';
import { generateMigration } from '../engine/schema/generate.js';
import { modules } from '../resources/modules.js';

/** The table tenantId points at, as resources/migration-helpers.ts binds recordColumns. */
const TENANT_TABLE = 'tenant';

class UsageError extends Error {}

interface Arguments {
  name: string;
  /** The folder to write into: resources/migrations/, or `--into <folder>` (an EXTRA_RESOURCES_DIR's migrations/). */
  into: string;
}

function parseArguments(args: string[]): Arguments {
  const words: string[] = [];
  let into = MIGRATIONS_DIR;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') continue;
    if (args[i] === '--into') {
      if (!args[i + 1]) throw new UsageError('--into needs a folder: npm run db:migration -- <name> --into <folder>');
      into = path.resolve(args[++i]);
    } else words.push(args[i]);
  }
  const name = words.join('_').trim();
  if (!name) throw new UsageError('Name the migration: npm run db:migration -- <name> (e.g. add_project_budget).');
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  if (!slug) throw new UsageError(`"${name}" has no letters or digits to name a migration with.`);
  return { name: slug, into };
}

/** How the migration imports the helpers, from the folder it is written to. */
function helpersSpecifier(folder: string): string {
  const relative = path.relative(folder, path.join(RESOURCES_DIR, 'migration-helpers.js')).split(path.sep).join('/');
  return relative.startsWith('.') ? relative : `./${relative}`;
}

/** YYYYMMDDhhmmss, UTC. */
const stamp = (date: Date) => date.toISOString().replace(/[-:T]/g, '').slice(0, 14);

/**
 * Now, or one second after the newest migration when that one is dated later (migrations run in
 * name order: a new one must sort last).
 */
function nextTimestamp(dirs: string[], now = new Date()): string {
  const newest = dirs
    .flatMap((dir) => (existsSync(dir) ? readdirSync(dir) : []))
    .map((f) => /^(\d{14})_/.exec(f)?.[1])
    .filter((s): s is string => Boolean(s))
    .sort()
    .pop();
  if (!newest || stamp(now) > newest) return stamp(now);
  const [y, mo, d, h, mi, s] = [0, 4, 6, 8, 10, 12].map((at, i) => Number(newest.slice(at, at + (i === 0 ? 4 : 2))));
  return stamp(new Date(Date.UTC(y, mo - 1, d, h, mi, s + 1)));
}

async function main(args: string[]): Promise<number> {
  const { name, into } = parseArguments(args);
  const config = loadConfig();
  // Run from the sources: every folder is a plain one.
  const folders = migrationFolders(MIGRATIONS_DIR, config.extraResourceDirs) as string[];
  // Definitions first: a mistake in one is told before a database is made.
  const registry = projectRegistry([RESOURCES_DIR, ...config.extraResourceDirs], modules);
  const database = await openDatabase({});
  try {
    await migrate(database.knex, folders);
    const differences = await diffSchema(database.knex, registry, { tenantTable: TENANT_TABLE });
    if (differences.length === 0) {
      console.log('No difference between the definitions and the migrations: no migration written.');
      return 0;
    }
    const file = path.join(into, `${nextTimestamp([...folders, into])}_${name}.ts`);
    mkdirSync(into, { recursive: true });
    writeFileSync(file, generateMigration(differences, { title: path.basename(file, '.ts'), helpers: helpersSpecifier(into) }));
    console.log(`${differences.length} difference(s):\n  ${differences.map((d) => d.message).join('\n  ')}`);
    const shown = path.relative(PROJECT_ROOT, file);
    console.log(`\nWrote ${shown.startsWith('..') ? file : shown}. Read it, then apply it with npm start (or npm run db:migrate).`);
    return 0;
  } finally {
    await database.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  const known = [UsageError, ConfigError, DefinitionError].some((kind) => err instanceof kind);
  console.error(known ? (err as Error).message : err);
  process.exitCode = 1;
}
