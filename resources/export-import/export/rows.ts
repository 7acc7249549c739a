// The rows of one resource that a caller may read, fetched in keyset batches: WHERE id > last
// ORDER BY id LIMIT n. No cursor and no transaction, so it runs the same on PGlite (one
// connection, shared with every other request between two batches) and on PostgreSQL (no pooled
// connection held for the length of a slow download); each batch uses the primary key index.
import type { Knex } from 'knex';
import type { Caller } from '../../../engine/caller.js';
import type { CompiledResource } from '../../../engine/resource/compiled.js';
import { scope } from '../../../engine/resource/query.js';

export type Row = Record<string, unknown>;

/** Rows per query: big enough that the round trips do not dominate, small enough to hold in memory. */
export const EXPORT_BATCH_ROWS = 1000;

/**
 * The caller's rows (tenant and owner rule through scope()), visible columns only, by id. A row
 * written during the export appears if its id sorts after the last one sent; none appears twice.
 */
export async function* keysetBatches(db: Knex, resource: CompiledResource, caller: Caller, size = EXPORT_BATCH_ROWS): AsyncGenerator<Row[]> {
  const id = `${resource.table}.id`;
  let last: string | undefined;
  for (;;) {
    const query = scope(db(resource.table).select(resource.selectColumns), resource, caller).orderBy(id, 'asc').limit(size);
    if (last !== undefined) query.where(id, '>', last);
    const rows: Row[] = await query;
    if (rows.length) yield rows;
    if (rows.length < size) return;
    last = rows[rows.length - 1].id as string;
  }
}
