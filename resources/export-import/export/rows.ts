// The rows of one resource that a caller may read, fetched in keyset batches: WHERE id > last
// ORDER BY id LIMIT n, a prepared statement on PostgreSQL (engine/resource/sql). No cursor and
// no transaction, so it runs the same on PGlite (one connection, shared with every other request
// between two batches) and on PostgreSQL (no pooled connection held for the length of a slow
// download); each batch uses the primary key index.
import type { Knex } from 'knex';
import type { Caller } from '../../../engine/caller.js';
import type { CompiledResource } from '../../../engine/resource/compiled.js';
import { run } from '../../../engine/resource/sql/runner.js';
import { keysetStatement } from '../../../engine/resource/sql/select.js';

export type Row = Record<string, unknown>;

/** Rows per query: enough that the round trips do not dominate, few enough that a batch dies young. */
export const EXPORT_BATCH_ROWS = 250;

/**
 * The caller's rows (tenant and owner rule, as every read of the engine), visible columns only, by id. A row
 * written during the export appears if its id sorts after the last one sent; none appears twice.
 */
export async function* keysetBatches(db: Knex, resource: CompiledResource, caller: Caller, size = EXPORT_BATCH_ROWS): AsyncGenerator<Row[]> {
  let last: string | undefined;
  for (;;) {
    const rows: Row[] = await run(db, keysetStatement(resource, caller, last, size));
    if (rows.length === 0) return;
    // Read before the batch is handed on: its consumer may empty it (formats.ts lets rows go early).
    const more = rows.length === size;
    last = rows[rows.length - 1].id as string;
    yield rows;
    if (!more) return;
  }
}
