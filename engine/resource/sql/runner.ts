// Runs a statement the engine compiled itself straight on a pooled driver connection: no query
// builder, no model hydration, rows as the driver reads them. On PostgreSQL each distinct text
// becomes a named prepared statement (parsed and planned once per connection), unless a
// transaction pooler stands between (the name would meet server connections that hold it already,
// or lack it: engine/db/pooler.ts); PGlite, one in-process connection, takes the text as it is. The connection comes from knex's pool, so a
// transaction, the pool's limits and its acquire timeout apply exactly as to knex's own queries.
import type { Knex } from 'knex';
import pg from 'pg';
import { usesTransactionPooler } from '../../db/pooler.js';

export interface Statement {
  text: string;
  values: unknown[];
  /**
   * Run unnamed even on PostgreSQL, so planned for its own values: a statement not worth keeping
   * prepared (an EXPLAIN, say), or one whose best plan depends on its values (a range's bounds:
   * sql/select.ts, plannedPerValues).
   */
  once?: boolean;
}

/**
 * Texts given a prepared-statement name, at most this many per process. List filters combine
 * into many shapes; past the cap a text runs unnamed (parsed each time), so neither this map nor
 * the statements PostgreSQL keeps per connection grow without bound.
 */
const MAX_NAMED = 2000;
const names = new Map<string, string>();

function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `engine_${names.size}`;
    names.set(text, name);
  }
  return name;
}

let queryCount = 0;

interface Driverish {
  query(text: string | object, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** The rows of one statement, on `db`'s pool, or on the transaction's own connection when `db` is one. */
export async function run(db: Knex, statement: Statement): Promise<any[]> {
  const client = db.client as Knex.Client & { acquireConnection(): Promise<Driverish>; releaseConnection(c: Driverish): Promise<void> };
  const connection = await client.acquireConnection();
  // knex's own events, so that what listens to a database's queries (debugging, tests, the
  // query-duration metric) sees these too; the id pairs a query with its answer, as knex's do.
  const query = { sql: statement.text, bindings: statement.values, method: 'raw', __knexQueryUid: `engine-${++queryCount}` };
  client.emit('query', query);
  try {
    const result =
      connection instanceof pg.Client
        ? await connection.query({ name: statement.once || usesTransactionPooler(db) ? undefined : nameOf(statement.text), text: statement.text, values: statement.values })
        : await connection.query(statement.text, statement.values);
    client.emit('query-response', result, query);
    return result.rows;
  } catch (err) {
    client.emit('query-error', err, query);
    throw err;
  } finally {
    await client.releaseConnection(connection);
  }
}
