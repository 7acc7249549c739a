// Search modes (engine/resource/sql/search.ts), on tags: name is a substring field, description a
// fulltext one. A fulltext search matches words, "phrases", or and -word, ranked best first when no
// order is given (and walked by cursor in that order); a substring field still matches any part of
// its value; the two combine with or. Text that makes no query matches nothing, never an error.
// The indexes the migrations made are the ones these statements use.
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { ids, sorted } from '../helpers/list-data.js';
import { fulltextDocument, fulltextQuery } from '../../engine/resource/sql/search.js';
import { hasTrigram } from '../../engine/schema/actual.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
let other: Tenant;
const tag: Record<string, string> = {};

const TAGS: Array<[name: string, description: string | null]> = [
  ['alpha', 'Quarterly planning meeting with the sales team'],
  ['bravo', 'Team offsite: planning and budget'],
  ['charlie', 'Budget review'],
  ['delta', 'Planning, planning and more planning'],
  ['meeting-room', null],
];

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  for (const [name, description] of TAGS) {
    tag[name] = randomUUID();
    await t.db('tag').insert({ id: tag[name], tenantId: acme.tenantId, organizationId: acme.organizationId, name, description, color: '#123456' });
  }
  await t.db('tag').insert({ tenantId: other.tenantId, organizationId: other.organizationId, name: 'echo', description: 'planning elsewhere', color: '#123456' });
});
test.after(async () => {
  await t.close();
});

const get = (query: string, who: Tenant = acme) => t.http.get(`/api/tags?${query}`).set(who.auth);
const names = (body: { items: Array<{ name: string }> }) => body.items.map((item) => item.name);
const search = async (text: string, extra = '') => {
  const res = await get(`search=${encodeURIComponent(text)}${extra}`);
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body;
};

test('a fulltext field matches whole words, in the caller tenant only, best match first', async () => {
  const body = await search('planning');
  // delta says planning three times; alpha's and bravo's documents are ranked by length after it.
  assert.equal(names(body)[0], 'delta');
  // The rank orders the page; it is not part of a record.
  assert.equal(Object.keys(body.items[0]).sort(), Object.keys((await get('take=1')).body.items[0]).sort());
  assert.equal(sorted(names(body)), ['alpha', 'bravo', 'delta']);
  assert.is(body.total, 3);
  // A word is a word: no prefix of it, in either case.
  assert.equal(names(await search('PLANNING')).length, 3);
  assert.equal(names(await search('plan')), []);
});

test('websearch syntax: "phrases", or, -word', async () => {
  assert.equal(names(await search('"sales team"')), ['alpha']);
  assert.equal(names(await search('"team sales"')), []);
  assert.equal(sorted(names(await search('planning -budget'))), ['alpha', 'delta']);
  assert.equal(sorted(names(await search('review or sales'))), ['alpha', 'charlie']);
});

test('substring fields still match any part of their value, beside the fulltext words', async () => {
  // "meet" is no word of a description, but part of a name.
  assert.equal(names(await search('meet')), ['meeting-room']);
  // "meeting": a word of alpha's description, and part of meeting-room's name.
  assert.equal(sorted(names(await search('meeting'))), ['alpha', 'meeting-room']);
  // The substring's wildcards are literal.
  assert.equal(names(await search('%')), []);
});

test('an order given replaces the rank; text that makes no query, or odd punctuation, matches nothing without an error', async () => {
  assert.equal(names(await search('planning', '&order[name]=DESC')), ['delta', 'bravo', 'alpha']);
  for (const text of ['-', '!', '"', '&|:*', '( )', "'", '\\', 'or', '-planning']) {
    const body = await search(text);
    assert.ok(!names(body).includes('echo'), text);
  }
  assert.equal(names(await search('!')), []);
  // A hyphen makes no query, but is part of a name.
  assert.equal(names(await search('-')), ['meeting-room']);
  // -planning alone: every record whose document lacks the word (an empty one lacks it too).
  assert.equal(sorted(names(await search('-planning'))), ['charlie', 'meeting-room']);
});

test('the search body gives what the query string gives', async () => {
  const res = await t.http.post('/api/tags/search').set(acme.auth).send({ search: 'planning' });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(names(res.body), names(await search('planning')));
});

test('a ranked search pages by cursor in rank order, each record once; its cursor is bound to the rank order', async () => {
  const all = names(await search('planning or budget or meeting'));
  assert.equal(sorted(all), ['alpha', 'bravo', 'charlie', 'delta']);
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const body = await search('planning or budget or meeting', `&take=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    seen.push(...names(body));
    cursor = body.nextCursor;
    if (!cursor) break;
  }
  assert.equal(seen, all);
  const first = await search('planning or budget or meeting', '&take=2');
  const other = await get(`search=planning%20or%20budget%20or%20meeting&take=2&order[name]=ASC&cursor=${encodeURIComponent(first.nextCursor)}`);
  assert.is(other.status, 400);
  assert.match(other.body.message.join(' '), 'cursor was made for the order @rank DESC, id DESC');
  const otherText = await get(`search=planning&take=2&cursor=${encodeURIComponent(first.nextCursor)}`);
  assert.is(otherText.status, 400);
  assert.equal(ids(first).length, 2);
});

/**
 * The plan PostgreSQL picks for `condition` on a tag table of some thousands of rows, where it may
 * not read the table itself: which index serves the condition. The rows are rolled back.
 */
async function planOf(condition: string, values: string[]) {
  let plan = '';
  const rollback = new Error('rollback');
  await t.db
    .transaction(async (trx) => {
      await trx.raw(
        `insert into "tag" ("tenantId", "organizationId", "name", "description", "color")
         select ?, ?, 'filler ' || g, 'filler text ' || g, '#000000' from generate_series(1, 3000) g`,
        [acme.tenantId, acme.organizationId],
      );
      // As autovacuum would: GIN indexes take new entries into a pending list first.
      await trx.raw(`select gin_clean_pending_list(indexrelid) from pg_index x join pg_class i on i.oid = x.indexrelid join pg_am a on a.oid = i.relam where x.indrelid = '"tag"'::regclass and a.amname = 'gin'`);
      await trx.raw('analyze "tag"');
      await trx.raw('set local enable_seqscan = off');
      const result: any = await trx.raw(`explain select 1 from "tag" where ${condition}`, values);
      plan = (result.rows ?? result).map((row: any) => row['QUERY PLAN']).join('\n');
      throw rollback;
    })
    .catch((error) => {
      if (error !== rollback) throw error;
    });
  return plan;
}

test('the migrations made the indexes the statements use: the fulltext document, and trigrams where pg_trgm is installed', async () => {
  const fulltext = await planOf(`${fulltextDocument(['description'], 'tag')} @@ ${fulltextQuery('?')}`, ['planning']);
  assert.match(fulltext, 'tag_search_fulltext', fulltext);
  if (await hasTrigram(t.db)) {
    const plan = await planOf(`"tag"."name" ilike ?`, ['%meeting%']);
    assert.match(plan, 'tag_name_trigram', plan);
  }
});

test.run();
