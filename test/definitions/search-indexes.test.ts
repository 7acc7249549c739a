// The search indexes' migration helpers where the database has no pg_trgm to offer (a PGlite
// without the extension stands in for such a PostgreSQL): a trigram index is skipped, not an
// error, and the migration check then asks for none; the fulltext index needs nothing, and an
// index built beforehand under its name is kept.
import { PGlite } from '@electric-sql/pglite';
import knex, { type Knex } from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { embeddedKnexConfig } from '../../engine/db/embedded-knex.js';
import { rowsOf } from '../../engine/db/rows.js';
import { fulltextIndex, trigramIndex } from '../../engine/db/search-indexes.js';
import { hasTrigram } from '../../engine/schema/actual.js';

let db: Knex;

test.before(async () => {
  db = knex(embeddedKnexConfig({}, new PGlite()));
  await db.schema.createTable('note', (t) => {
    t.increments('id');
    t.string('title', 80);
    t.text('body');
  });
});
test.after(async () => {
  await db?.destroy();
});

const indexes = async () => rowsOf<{ indexname: string }>(await db.raw(`select indexname from pg_indexes where tablename = 'note' order by indexname`)).map((r) => r.indexname);

test('without pg_trgm on offer a trigram index is skipped (false, nothing made), and none is expected', async () => {
  assert.is(await trigramIndex(db, 'note', 'title'), false);
  assert.equal(await indexes(), ['note_pkey']);
  assert.is(await hasTrigram(db), false);
});

test('the fulltext index needs no extension; made twice, it is kept once', async () => {
  await fulltextIndex(db, 'note', ['title', 'body']);
  await fulltextIndex(db, 'note', ['title', 'body']);
  assert.equal(await indexes(), ['note_pkey', 'note_search_fulltext']);
});

test.run();
