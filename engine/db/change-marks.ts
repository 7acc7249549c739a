// Change marks: what tells a list that its table has not changed since its total was counted, in
// the list's own snapshot, whoever wrote (this process, another instance, another client of the
// database). A statement-level trigger on each marked table adds one row per statement and tenant
// to `row_change`, with a random token: inserts only, so writers never wait on each other. The
// mark of a table and tenant is the number of those rows and the sum of their tokens, as the
// reading snapshot sees them: the same mark, the same committed writes (two different sets of
// writes share a mark only if their random sums collide). A fold moves rows into one sum per table
// and tenant (`row_change_sum`) in a single statement, so every snapshot sees each row either
// unfolded or folded, never both or neither, and the mark stays what it was.
//
// The engine names these tables and the trigger; an application's migration makes them, and
// marks the tables it wants (engine/resource/total-cache.ts uses marked tables only).
import type { Knex } from 'knex';
import { usesTransactionPooler } from './pooler.js';
import { rowsOf } from './rows.js';

export const CHANGE_TABLE = 'row_change';
export const CHANGE_SUM_TABLE = 'row_change_sum';
const TRIGGER_FUNCTION = 'note_row_change';
/** Every marked table's triggers are named so (the prefix is how marked tables are found). */
const TRIGGER_PREFIX = 'row_change_';
/** The tenant of a change that may touch every tenant's rows (TRUNCATE). */
export const EVERY_TENANT = '*';

/** The two tables and the trigger function (PL/pgSQL, on PostgreSQL and PGlite alike). */
export async function createChangeMarks(knex: Knex): Promise<void> {
  await knex.schema.createTable(CHANGE_TABLE, (t) => {
    t.text('tableName').notNullable();
    t.text('tenantId').notNullable();
    t.bigInteger('token').notNullable();
    t.index(['tableName', 'tenantId']);
  });
  await knex.schema.createTable(CHANGE_SUM_TABLE, (t) => {
    t.text('tableName').notNullable();
    t.text('tenantId').notNullable();
    t.bigInteger('changes').notNullable();
    t.decimal('tokens', null).notNullable();
    t.primary(['tableName', 'tenantId']);
  });
  // One row per statement and tenant touched; an UPDATE counts the tenants before and after.
  // The token is random in [0, 2^62): a sum of a few billion of them still fits numeric exactly.
  const token = `floor(random() * 4611686018427387904)::bigint`;
  // With its owner's rights, in the schema it is made in: a client that may write a table may
  // move its marks, whatever its own grants and search_path.
  const schema = rowsOf<{ schema: string }>(await knex.raw('select current_schema() as "schema"'))[0].schema;
  await knex.raw(`
    create function "${TRIGGER_FUNCTION}"() returns trigger language plpgsql security definer
    set search_path = "${schema.replace(/"/g, '""')}", pg_temp as $$
    begin
      if TG_OP = 'TRUNCATE' then
        insert into "${CHANGE_TABLE}" values (TG_TABLE_NAME, '${EVERY_TENANT}', ${token});
      elsif TG_OP = 'INSERT' then
        insert into "${CHANGE_TABLE}" select TG_TABLE_NAME, t."tenantId"::text, ${token} from (select distinct "tenantId" from "new_rows") t;
      elsif TG_OP = 'DELETE' then
        insert into "${CHANGE_TABLE}" select TG_TABLE_NAME, t."tenantId"::text, ${token} from (select distinct "tenantId" from "old_rows") t;
      else
        insert into "${CHANGE_TABLE}" select TG_TABLE_NAME, t."tenantId"::text, ${token}
          from (select "tenantId" from "new_rows" union select "tenantId" from "old_rows") t;
      end if;
      return null;
    end $$`);
  await knex.raw(`revoke execute on function "${TRIGGER_FUNCTION}"() from public`);
}

export async function dropChangeMarks(knex: Knex): Promise<void> {
  await knex.raw(`drop function if exists "${TRIGGER_FUNCTION}"() cascade`);
  await knex.schema.dropTableIfExists(CHANGE_SUM_TABLE);
  await knex.schema.dropTableIfExists(CHANGE_TABLE);
}

/** Marks a table (one with a tenantId column): its writes, by any client, move its marks. */
export async function markChanges(knex: Knex, table: string): Promise<void> {
  const on = (name: string) => `"${TRIGGER_PREFIX}${name}" after`;
  const fn = `for each statement execute function "${TRIGGER_FUNCTION}"()`;
  await knex.raw(`create trigger ${on('insert')} insert on ?? referencing new table as "new_rows" ${fn}`, [table]);
  await knex.raw(`create trigger ${on('update')} update on ?? referencing old table as "old_rows" new table as "new_rows" ${fn}`, [table]);
  await knex.raw(`create trigger ${on('delete')} delete on ?? referencing old table as "old_rows" ${fn}`, [table]);
  await knex.raw(`create trigger ${on('truncate')} truncate on ?? ${fn}`, [table]);
}

export async function unmarkChanges(knex: Knex, table: string): Promise<void> {
  for (const event of ['insert', 'update', 'delete', 'truncate']) await knex.raw(`drop trigger if exists "${TRIGGER_PREFIX}${event}" on ??`, [table]);
}

/** The marked tables of the connection's schema (every trigger of the set present). */
export async function markedTables(db: Knex): Promise<Set<string>> {
  const rows = rowsOf<{ table: string }>(
    await db.raw(
      `select c.relname as "table" from pg_trigger g join pg_class c on c.oid = g.tgrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and g.tgname like '${TRIGGER_PREFIX}%' and g.tgenabled <> 'D'
        group by c.relname having count(*) = 4`,
    ),
  );
  return new Set(rows.map((r) => r.table));
}

/**
 * The mark of `table` for one tenant (a bound value, `tenantParam`: its placeholder) as SQL text:
 * the changes to its rows, folded or not, as `<count>:<sum of tokens>`. Read in the statement of
 * the list it vouches for, so in the same snapshot.
 */
export function markSql(table: string, tenantParam: string): string {
  const tableLiteral = `'${table.replace(/'/g, "''")}'`;
  // As the trigger writes it (uuid's own text), however the caller's tenant id is spelled.
  const which = `"tableName" = ${tableLiteral} and "tenantId" in (${tenantParam}::uuid::text, '${EVERY_TENANT}')`;
  return (
    `(select coalesce(sum("n"), 0)::text || ':' || coalesce(sum("s"), 0)::text from (` +
    `select "changes" as "n", "tokens" as "s" from "${CHANGE_SUM_TABLE}" where ${which} ` +
    `union all select 1, "token" from "${CHANGE_TABLE}" where ${which}) as "marks")`
  );
}

/**
 * Folds every change row this snapshot sees into its table and tenant's sum, in one statement:
 * marks read before and after are equal. Concurrent folds are safe (a row another fold deleted
 * first is skipped); rows written meanwhile wait for the next fold. Returns the rows folded.
 */
export async function foldChanges(db: Knex): Promise<number> {
  const rows = rowsOf<{ folded: string | number }>(
    await db.raw(`
      with "gone" as (delete from "${CHANGE_TABLE}" returning "tableName", "tenantId", "token"),
      "summed" as (
        insert into "${CHANGE_SUM_TABLE}" as "s" ("tableName", "tenantId", "changes", "tokens")
        select "tableName", "tenantId", count(*), sum("token") from "gone" group by "tableName", "tenantId"
        on conflict ("tableName", "tenantId") do update set "changes" = "s"."changes" + excluded."changes", "tokens" = "s"."tokens" + excluded."tokens"
        returning "changes")
      select (select count(*) from "gone") as "folded"`),
  );
  return Number(rows[0]?.folded ?? 0);
}

/**
 * Rows a process folds between two vacuums of the change tables. Every fold leaves the rows it
 * moved dead in the change table, and a mark reads past them through its index until a vacuum
 * takes them out: with autovacuum off (some CI and bench servers run so) the reads of a busy
 * table's marks grew from a few pages to 23 MB after 250,000 writes, and its lists ran 8 × slower.
 */
export const VACUUM_AFTER_ROWS = 5000;

/**
 * Takes the dead rows out of the change tables. SKIP_LOCKED: a process that finds another's
 * vacuum under way skips it. TRUNCATE false: giving the empty pages back would take an exclusive
 * lock on the change table, which every write to a marked table and every mark read would wait
 * behind; the dead rows gone is what keeps the reads short. A role that may not vacuum them gets
 * a notice, not an error (autovacuum is then the owner's). PostgreSQL 12 or later.
 */
export async function vacuumChanges(db: Knex): Promise<void> {
  await db.raw(`vacuum (skip_locked, truncate false) "${CHANGE_TABLE}", "${CHANGE_SUM_TABLE}"`);
}

export interface FoldOptions {
  /** Rows this process folds between two vacuums (VACUUM_AFTER_ROWS). */
  vacuumAfterRows?: number;
  /** How it vacuums (vacuumChanges). */
  vacuum?: (db: Knex) => Promise<void>;
}

/**
 * Folds every `everyMs` while the app runs (each process; concurrent folds are safe), so that a
 * mark reads a few rows, not every change since the start; only while `marked` says the schema
 * has marked tables (none before the migrations that make them, or in an app without them). Its
 * first fold and then every `vacuumAfterRows` rows it folded, it vacuums the change tables; not
 * behind a transaction pooler, which runs a statement with the schema in a transaction block,
 * where VACUUM cannot run (autovacuum must keep up there).
 */
export function foldEvery(db: Knex, everyMs: number, marked: () => Promise<boolean>, onError: (err: unknown) => void, options: FoldOptions = {}): () => void {
  const { vacuumAfterRows = VACUUM_AFTER_ROWS, vacuum = vacuumChanges } = options;
  const vacuums = !usesTransactionPooler(db);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** Rows folded since the last vacuum; the first fold vacuums what an earlier run may have left. */
  let sinceVacuum = vacuumAfterRows;
  const foldAndVacuum = async () => {
    sinceVacuum += await foldChanges(db);
    if (!vacuums || sinceVacuum < vacuumAfterRows) return;
    // Counted as done even when it fails: one warning per vacuumAfterRows rows, not per fold.
    sinceVacuum = 0;
    try {
      await vacuum(db);
    } catch (err) {
      throw new Error(`vacuuming the change tables failed: ${(err as Error)?.message ?? err}`);
    }
  };
  const next = () => {
    if (!stopped) timer = setTimeout(fold, everyMs).unref();
  };
  const fold = () => {
    marked()
      .then((any) => (any ? foldAndVacuum() : undefined))
      .then(next, (err) => {
        if (stopped) return; // the app closed its database under a running fold
        onError(err);
        next();
      });
  };
  next();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
