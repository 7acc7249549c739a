// PostgreSQL reached through a transaction-mode pooler (PgBouncer's pool_mode=transaction, most
// cloud proxies): a client connection is handed a server connection per transaction, so nothing
// may be left on a connection for a later transaction to find. Behind one, the engine names no
// prepared statements (another client's connection may already hold the name, or this one's may
// lack it), sets no per-connection settings, and sets the schema inside every transaction.
import type { Knex } from 'knex';
import pg from 'pg';

/** DATABASE_POOLER: `auto` probes the connection at start-up; `transaction` and `none` say what is there. */
export type PoolerSetting = 'auto' | 'transaction' | 'none';

type Callback = (err: Error | null, result?: unknown) => void;

/** The marker knexConfig leaves on the knex configuration, read back by usesTransactionPooler. */
interface PoolerMarked {
  transactionPooler?: boolean;
}

export const markTransactionPooler = <T extends object>(config: T): T => Object.assign(config, { transactionPooler: true } satisfies PoolerMarked);

/** Whether `db` (a knex instance or one of its transactions) reaches PostgreSQL through a transaction pooler. */
export const usesTransactionPooler = (db: Knex): boolean => Boolean((db.client.config as PoolerMarked | undefined)?.transactionPooler);

/** How long the probe waits for a second server connection before calling the answer "direct". */
const PROBE_WAIT_MS = 1000;

const backendPid = async (client: pg.Client): Promise<number> => (await client.query('select pg_backend_pid() as pid')).rows[0].pid;

/**
 * Whether two transactions of one client connection can land on different PostgreSQL backends,
 * which a direct connection (or a session-mode pooler) never does. Two connections: A asks its
 * backend; B opens a transaction (a pooler hands it A's backend, idle again, or holds another);
 * while B holds it, A asks again. The same backend for A and B, or a new one for A, is a pooler.
 */
export async function behindTransactionPooler(databaseUrl: string, timeoutMs: number): Promise<boolean> {
  const connect = async () => {
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: timeoutMs });
    client.on('error', () => {}); // a connection lost after the probe is of no interest
    await client.connect();
    return client;
  };
  const a = await connect();
  let b: pg.Client | undefined;
  try {
    b = await connect();
    const first = await backendPid(a);
    await b.query('begin');
    if ((await backendPid(b)) === first) return true;
    const again = backendPid(a);
    // A pool of one server connection makes A wait until B is done: then the probe cannot tell.
    const answered = await Promise.race([again.then(() => true), new Promise<false>((resolve) => setTimeout(resolve, PROBE_WAIT_MS, false).unref())]);
    await b.query('commit');
    return answered && (await again) !== first;
  } finally {
    await Promise.all([a.end().catch(() => {}), b?.end().catch(() => {})]);
  }
}

const isBegin = (text: string) => /^\s*(begin|start\s+transaction)\b/i.test(text);

/**
 * The schema (DATABASE_SCHEMA) set inside every transaction, for a pooled connection (knex's pool
 * `afterCreate`): a per-connection `SET search_path` would stay on whichever server connection ran
 * it. A transaction's BEGIN is followed by `SET LOCAL search_path`; a statement outside a
 * transaction runs in one of its own (BEGIN and SET LOCAL, the statement, COMMIT: two more round
 * trips, the price of a schema behind a transaction pooler). Streams are left as they are.
 */
export function schemaPerTransaction(schema: string) {
  const setLocal = `set local search_path to ${pg.escapeIdentifier(schema)}`;
  return (connection: pg.Client) => {
    const original = connection.query.bind(connection) as (...args: unknown[]) => Promise<any>;
    const inOwnTransaction = async (args: unknown[]) => {
      await original(`begin; ${setLocal}`);
      try {
        const result = await original(...args);
        await original('commit');
        return result;
      } catch (err) {
        await original('rollback').catch(() => {});
        throw err;
      }
    };
    const withSchema = async (args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown }).text ?? '');
      if (!isBegin(text)) return inOwnTransaction(args);
      const result = await original(...args);
      await original(setLocal);
      return result;
    };
    (connection as { query: unknown }).query = function schemaQuery(this: pg.Client, ...args: unknown[]) {
      const first = args[0] as { submit?: unknown } | string | undefined;
      const streamed = typeof first === 'object' && typeof first?.submit === 'function';
      // Inside a transaction (or a failed one) its BEGIN already set the schema.
      if (streamed || connection.getTransactionStatus() !== 'I') return original(...args);
      const last = args[args.length - 1];
      if (typeof last !== 'function') return withSchema(args);
      withSchema(args.slice(0, -1)).then(
        (result) => (last as Callback)(null, result),
        (err) => (last as Callback)(err),
      );
      return undefined;
    };
  };
}
