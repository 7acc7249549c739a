// The indexes of a resource's `search` fields, for migrations: a GIN index on the fulltext
// document, and a GIN trigram index per substring field where the database has pg_trgm. Their
// expressions come from the query's own writer (engine/resource/sql/search.ts), so that the
// planner can use them.
import type { Knex } from 'knex';
import { fulltextDocument } from '../resource/sql/search.js';
import { logEvent } from '../log/log.js';
import { rowsOf } from './rows.js';

/** Index names are cut to PostgreSQL's 63 characters, as knex's own are. */
const cut = (name: string) => name.toLowerCase().slice(0, 63);
export const fulltextIndexName = (table: string) => cut(`${table}_search_fulltext`);
export const trigramIndexName = (table: string, column: string) => cut(`${table}_${column}_trigram`);

/** The schema pg_trgm is installed in, or undefined. */
export async function trigramSchema(knex: Knex): Promise<string | undefined> {
  const rows = rowsOf(await knex.raw(`select n.nspname as "schema" from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`));
  return rows[0]?.schema;
}

/**
 * pg_trgm's schema, installing the extension in `public` when the database offers it and the
 * migrating user may (a trusted extension since PostgreSQL 13: the database's owner may). In
 * `public`, not the current schema: the extension is one per database, and a schema of its own
 * (a test's) may be dropped with everything in it. A savepoint keeps a refusal from spoiling the
 * migration's transaction; a concurrent install by another migration is found afterwards.
 */
async function installTrigram(knex: Knex): Promise<string | undefined> {
  const installed = await trigramSchema(knex);
  if (installed) return installed;
  const offered = rowsOf(await knex.raw(`select 1 from pg_available_extensions where name = 'pg_trgm'`)).length > 0;
  if (!offered) return undefined;
  try {
    await knex.transaction((trx) => trx.raw('create extension if not exists pg_trgm with schema public'));
  } catch (error) {
    const schema = await trigramSchema(knex);
    if (!schema) logEvent('warn', 'pg_trgm could not be installed: substring search works without its trigram indexes', { reason: (error as Error).message });
    return schema;
  }
  return trigramSchema(knex);
}

/**
 * The GIN index of a resource's fulltext search document (its fulltext fields, in definition order).
 * An index of that name already there is kept: one built beforehand with `create index concurrently`.
 */
export async function fulltextIndex(knex: Knex, table: string, columns: string[]): Promise<void> {
  await knex.raw(`create index if not exists ?? on ?? using gin (${fulltextDocument(columns)})`, [fulltextIndexName(table), table]);
}

/**
 * A GIN trigram index on a substring search field, so `ilike '%text%'` need not read the table;
 * false (nothing made) where the database has no pg_trgm.
 */
export async function trigramIndex(knex: Knex, table: string, column: string): Promise<boolean> {
  const schema = await installTrigram(knex);
  if (!schema) return false;
  await knex.raw(`create index if not exists ?? on ?? using gin (?? ??.gin_trgm_ops)`, [trigramIndexName(table, column), table, column, schema]);
  return true;
}

/** Drops an index made above, if it is there (a migration's down). */
export async function dropSearchIndex(knex: Knex, name: string): Promise<void> {
  await knex.raw('drop index if exists ??', [name]);
}
