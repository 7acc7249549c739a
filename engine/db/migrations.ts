// Migrations: knex migrations from one or more folders (the app's, and a test's fixtures),
// loaded with import() so they can be TypeScript, plus the column helpers they share.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import { tenantWideUniqueColumns } from '../resource/compiled.js';

/** This module runs from its TypeScript source (through tsx), not compiled into dist/. */
const RUNS_TYPESCRIPT = import.meta.url.endsWith('.ts');

interface MigrationFile {
  name: string;
  file: string;
}

/**
 * A folder of migrations, or a compiled service's pair: the compiled migrations, and the sources
 * of those written since the build (their names not among the compiled ones), applied from there.
 */
export type MigrationFolder = string | { compiled: string; sources: string };

const MIGRATION_FILE = /\.(ts|js)$/;
const migrationFiles = (folder: string) => readdirSync(folder).filter((f) => MIGRATION_FILE.test(f) && !f.endsWith('.d.ts'));

/** The migrations of one folder (or pair), by name. */
function folderMigrations(folder: MigrationFolder): MigrationFile[] {
  const of = (dir: string, files: string[]) => files.map((f) => ({ name: f.replace(MIGRATION_FILE, ''), file: path.join(dir, f) }));
  if (typeof folder === 'string') return of(folder, migrationFiles(folder));
  const compiled = of(folder.compiled, migrationFiles(folder.compiled));
  const names = new Set(compiled.map((m) => m.name));
  return [...compiled, ...of(folder.sources, migrationFiles(folder.sources).filter((f) => f.endsWith('.ts'))).filter((m) => !names.has(m.name))];
}

/** Migrations of several folders, applied in file-name order (names start with a timestamp); a name twice is an error. */
export class FolderMigrationSource implements Knex.MigrationSource<MigrationFile> {
  constructor(private readonly folders: MigrationFolder[]) {}

  async getMigrations(): Promise<MigrationFile[]> {
    const found = new Map<string, MigrationFile>();
    for (const migration of this.folders.flatMap(folderMigrations)) {
      const first = found.get(migration.name);
      if (first) throw new Error(`Two migrations are named ${migration.name}: ${first.file} and ${migration.file}. Rename one (its timestamp) before anything applies it.`);
      found.set(migration.name, migration);
    }
    return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  getMigrationName(migration: MigrationFile): string {
    return migration.name;
  }

  async getMigration(migration: MigrationFile): Promise<Knex.Migration> {
    // The compiled service (dist/, plain node) cannot import TypeScript: a migration written since
    // the build, and an EXTRA_RESOURCES_DIR's, are .ts, as `npm run db:migration` writes them. tsx
    // loads such a file by itself.
    if (migration.file.endsWith('.ts') && !RUNS_TYPESCRIPT) {
      const { tsImport } = await import('tsx/esm/api');
      return tsImport(pathToFileURL(migration.file).href, import.meta.url);
    }
    return import(pathToFileURL(migration.file).href);
  }
}

/** The application's migrations, then those of each extra resources folder that has a migrations/ subfolder. */
export function migrationFolders(appMigrations: MigrationFolder, extraResourceDirs: string[]): MigrationFolder[] {
  return [appMigrations, ...extraResourceDirs.map((dir) => path.join(dir, 'migrations')).filter((dir) => existsSync(dir))];
}

/** The database has applied migrations that none of the folders provides any more. */
export class MissingMigrationsError extends Error {}

/**
 * knex's own tables (knex_migrations and its lock), made while holding a lock of this schema:
 * instances starting at once on an empty database would otherwise each create them (one fails)
 * or each add a lock row (two rows keep every later migration "already locked"). The lock is a
 * transaction's, so it holds behind a transaction pooler too. Past this point knex's lock row
 * makes a second instance wait for the first one's migrations, then find nothing left to do.
 */
async function ensureMigrationTables(db: Knex, migrationSource: FolderMigrationSource): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`select pg_advisory_xact_lock(hashtext('knex_migrations ' || current_schema()))`);
    await trx.migrate.list({ migrationSource });
  });
}

export async function migrate(db: Knex, folders: MigrationFolder[]): Promise<string[]> {
  try {
    const migrationSource = new FolderMigrationSource(folders);
    await ensureMigrationTables(db, migrationSource);
    const [, applied] = await db.migrate.latest({ migrationSource });
    return applied as string[];
  } catch (err) {
    // knex's wording ("the migration directory is corrupt") points at the wrong cause: usually a
    // folder of migrations (an EXTRA_RESOURCES_DIR) that was used before is no longer configured.
    const missing = /the following files are missing: (.*)$/.exec((err as Error)?.message ?? '');
    if (!missing) throw err;
    throw new MissingMigrationsError(
      `The database has migrations applied that no migration folder provides: ${missing[1]}. ` +
        `Configure again the folder they came from (resources/migrations/, or the migrations/ of an EXTRA_RESOURCES_DIR folder).`,
    );
  }
}

export type RecordScope = 'tenant' | 'organization';

/** The tables that the engine's own columns point at: a project's tenants and organizations. */
export interface ScopeTables {
  tenant: string;
  organization: string;
}

/**
 * id, tenantId, (organizationId,) createdAt, updatedAt: the columns the engine adds to every
 * record. Their indexes depend on the definition (its `sort:` fields): the table's migration
 * writes them, as `npm run db:migration` generates them (engine/schema/expected.ts says which).
 */
export function recordColumnsFor(tables: ScopeTables) {
  /** `organizationOptional`: organizationId may be null (a definition's organizationOptional: true). */
  return function recordColumns(knex: Knex, t: Knex.CreateTableBuilder, scope: RecordScope, { organizationOptional = false } = {}) {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenantId').notNullable().references('id').inTable(tables.tenant).onDelete('CASCADE');
    if (scope === 'organization') {
      const organizationId = t.uuid('organizationId');
      if (!organizationOptional) organizationId.notNullable();
      organizationId.references('id').inTable(tables.organization).onDelete('RESTRICT');
    }
    t.timestamp('createdAt', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updatedAt', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  };
}

/** A many-to-many join table; both sides cascade, so deleting either record unlinks it. */
export function joinTable(knex: Knex, name: string, from: [column: string, table: string], to: [column: string, table: string]) {
  return knex.schema.createTable(name, (t) => {
    t.uuid(from[0]).notNullable().references('id').inTable(from[1]).onDelete('CASCADE');
    t.uuid(to[0]).notNullable().references('id').inTable(to[1]).onDelete('CASCADE');
    t.primary([from[0], to[0]]);
    t.index([to[0]]);
  });
}

/**
 * The check constraint of a definition's `rules:` entry (field >= atLeast when both are set). Its
 * name is how a violation is told back to the client with the rule's own message.
 */
export function ruleConstraintName(table: string, field: string, atLeast: string): string {
  return `${table}_${field}_at_least_${atLeast}`.toLowerCase().slice(0, 63);
}

export function atLeastRule(t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, table: string, field: string, atLeast: string) {
  // Identifiers written into the SQL, not bound: an ALTER TABLE cannot take $n parameters.
  const [a, b] = [quoted(field), quoted(atLeast)];
  t.check(`${a} is null or ${b} is null or ${a} >= ${b}`, [], ruleConstraintName(table, field, atLeast));
}

/**
 * A `unique:` rule naming organizationId, over the records of no organization (organizationOptional):
 * PostgreSQL finds no two nulls equal, so the rule's own constraint never compares them. This unique
 * index of (tenantId, the rule's other fields) over those records holds them to it within the tenant.
 */
export function tenantWideUnique(knex: Knex, t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, table: string, fields: string[]) {
  const columns = tenantWideUniqueColumns(true, fields);
  if (!columns) throw new Error(`tenantWideUnique(${table}): the rule's fields (${fields.join(', ')}) must include organizationId`);
  t.unique(columns, { indexName: tenantWideUniqueName(table, columns), predicate: knex.whereNull('organizationId') });
}

export const tenantWideUniqueName = (table: string, columns: string[]) => `${table}_${columns.join('_')}_tenant_wide_unique`.toLowerCase().slice(0, 63);

/**
 * A unique rule over the rows where `nulls` are null: a softDelete resource's rule holds over the
 * records not deleted (deletedAt null), so a new record may take a deleted one's values.
 */
export function uniqueWhereNull(knex: Knex, t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, table: string, columns: string[], nulls: string[]) {
  const predicate = nulls.reduce((query, column) => query.whereNull(column), knex.queryBuilder());
  t.unique(columns, { indexName: uniqueWhereNullName(table, columns, nulls), predicate });
}

export const uniqueWhereNullName = (table: string, columns: string[], nulls: string[]) =>
  `${table}_${columns.join('_')}_where_${nulls.join('_')}_null`.toLowerCase().slice(0, 63);

const quoted = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;

/**
 * A `computed: {secondsBetween: [start, end]}` field: a generated column, so that every write,
 * partial ones included, keeps it right without the service reading the record first.
 */
export function secondsBetweenColumn(knex: Knex, t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, column: string, start: string, end: string) {
  t.specificType(column, knex.raw(`integer generated always as (floor(extract(epoch from (?? - ??)))::integer) stored`, [end, start]).toQuery());
}
