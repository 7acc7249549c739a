// DATABASE_POOLER: `auto` tells a direct connection from a transaction-mode pooler, and behind one
// each database's schema holds in every statement and transaction however the pooler deals out its
// server connections. The pooler is TEST_POOLER_URL (PgBouncer in transaction mode in front of
// DATABASE_URL's database, as .ci/run starts it); without it only the direct side runs, and when
// DATABASE_URL is the pooler itself (a whole run through it) only the pooled side. The embedded
// database has no connections to pool: there the suite skips.
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ensureSchema, openDatabase, resolvePooler, type Database } from '../../engine/db/database.js';
import { usesTransactionPooler } from '../../engine/db/pooler.js';
import { dropSchema } from '../helpers/server-process.js';

const { DATABASE_URL, TEST_POOLER_URL } = process.env;
// A run of the whole suite through the pooler names it in both (or says DATABASE_POOLER=transaction).
const direct = DATABASE_URL && DATABASE_URL !== TEST_POOLER_URL && process.env.DATABASE_POOLER !== 'transaction';
const onDirectPostgres = direct ? test : test.skip;
const throughPooler = DATABASE_URL && TEST_POOLER_URL ? test : test.skip;
if (!DATABASE_URL) console.log('  pooler: skipped, it needs DATABASE_URL (the embedded database is one in-process connection)');
else if (!TEST_POOLER_URL) console.log('  pooler: the tests through a pooler skip without TEST_POOLER_URL');

onDirectPostgres('auto on a direct connection: none, and named statements stay on', async () => {
  assert.is((await resolvePooler({ databaseUrl: DATABASE_URL, pooler: 'auto' })).pooler, 'none');
});

throughPooler('auto through a transaction pooler: transaction', async () => {
  assert.is((await resolvePooler({ databaseUrl: TEST_POOLER_URL, pooler: 'auto' })).pooler, 'transaction');
});

throughPooler('through the pooler, two databases in two schemas each see only their own, in statements and transactions', async () => {
  const schemas = [1, 2].map((i) => `pooler_${i}_${randomBytes(4).toString('hex')}`);
  const databases: Database[] = [];
  try {
    for (const schema of schemas) {
      const database = await openDatabase({ databaseUrl: TEST_POOLER_URL, schema, pooler: 'auto', poolMax: 4 });
      databases.push(database);
      assert.ok(usesTransactionPooler(database.knex));
      await ensureSchema(database.knex, schema);
      await database.knex.schema.createTable('probe', (t) => t.text('schema'));
      await database.knex('probe').insert({ schema });
    }
    // Interleaved, so the pooler hands each server connection to both databases in turn.
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const db = databases[i % 2].knex;
        const read = i % 3 === 0 ? db.transaction((trx) => trx('probe').first()) : db('probe').first();
        return read.then((row: { schema: string }) => [schemas[i % 2], row.schema]);
      }),
    );
    for (const [expected, found] of answers) assert.is(found, expected);
  } finally {
    await Promise.all(databases.map((d) => d.close()));
    for (const schema of schemas) await dropSchema(DATABASE_URL!, schema);
  }
});

test.run();
