// List parameters on a resource that declares no search, no date range and no tag filter, and a
// maximum page of 5 (test/fixtures/list/list-note.yaml): what it does not support is a 400 naming
// it; where values are coerced to integer, number and date fields.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES_DIR } from '../../app/paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { badRequestBody, ids, minutesFrom, listAssertions } from '../helpers/list-data.js';

const fixtureDir = fileURLToPath(new URL('../fixtures/list', import.meta.url));
const migrationDir = fileURLToPath(new URL('../fixtures/list-migrations', import.meta.url));
const SUPPORTED = 'take, skip, order, where, relations, select, cursor, count';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
/** Notes by title, oldest first. */
const notes: Record<string, string> = {};

test.before(async () => {
  t = await createTestApp({ resourceDirs: [RESOURCES_DIR, fixtureDir], migrationDirs: [migrationDir] });
  acme = await newTenant(t, 'Acme');
  const titles = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'];
  const created = minutesFrom('2026-06-01T00:00:00.000Z', titles.length);
  const rows = titles.map((title, i) => ({
    id: randomUUID(),
    tenantId: acme.tenantId,
    organizationId: acme.organizationId,
    title,
    rank: i % 3,
    score: i / 2,
    dueOn: i < 2 ? '2026-01-05T00:00:00.000Z' : null,
    createdAt: created[i],
  }));
  await t.db('list_fixture_note').insert(rows);
  rows.forEach((r) => (notes[r.title] = r.id));
});
test.after(async () => {
  await t.close();
});

const get = (query: string) => t.http.get(`/api/list-note?${query}`).set(acme.auth);
const { expectIds, expect400 } = listAssertions(get);
const n = (...titles: string[]) => titles.map((title) => notes[title]);



test('a resource whose maximum page is below 10 gets that maximum by default, and larger takes are clamped to it', async () => {
  const first = await get('');
  assert.is(first.status, 200, JSON.stringify(first.body));
  assert.equal(ids(first.body), n('n7', 'n6', 'n5', 'n4', 'n3'));
  assert.is(first.body.total, 8);
  const clamped = await get('take=6&skip=5');
  assert.equal(ids(clamped.body), n('n2', 'n1', 'n0'));
  const post = await t.http.post('/api/list-note/search').set(acme.auth).send({ take: 50 });
  assert.is(post.status, 200);
  assert.is(post.body.items.length, 5);
});

test('search on a resource without search fields is a 400 naming it', async () => {
  await expect400('search=n1', [`search is not a supported list parameter of list-note; supported: ${SUPPORTED}`]);
  const post = await t.http.post('/api/list-note/search').set(acme.auth).send({ findInput: { search: 'n1' } });
  assert.is(post.status, 400);
  assert.equal(post.body, badRequestBody([`search is not a supported list parameter of list-note; supported: ${SUPPORTED}`]));
});

test('startDate, endDate and tags[] are 400s here too', async () => {
  await expect400(`startDate=2026-01-01&endDate=2026-02-01&tags[]=${randomUUID()}`, [
    `startDate is not a supported list parameter of list-note; supported: ${SUPPORTED}`,
    `endDate is not a supported list parameter of list-note; supported: ${SUPPORTED}`,
    `tags is not a supported list parameter of list-note; supported: ${SUPPORTED}`,
  ]);
});

test('where values are coerced to integer, number and date fields', async () => {
  await expectIds('where[rank]=0', n('n0', 'n3', 'n6'));
  await expectIds('where[rank]=-1', []);
  await expectIds('where[score]=1.5', n('n3'));
  await expectIds('where[score]=2', n('n4'));
  await expectIds('where[dueOn]=2026-01-05', n('n0', 'n1'));
  await expectIds('where[dueOn]=2026-01-05T00:00:00.000Z', n('n0', 'n1'));
  await expectIds('where[rank]=1&where[score]=0.5', n('n1'));
  await expect400('where[rank]=1.5', ['where.rank must be an integer number']);
  await expect400('where[rank]=one', ['where.rank must be an integer number']);
  await expect400('where[score]=abc', ['where.score must be a number']);
  await expect400('where[score]=', ['where.score must be a number']);
  await expect400('where[dueOn]=2026-02-31', ['where.dueOn must be a valid ISO 8601 date string']);
  await expect400('where[title]=n1&where[rank]=x&where[color]=red', [
    'where.rank must be an integer number',
    "where: 'color' is not filterable; filterable: id, organizationId, title, rank, score, dueOn",
  ]);
});

test('the same coercion applies to JSON values of a search body', async () => {
  const ok = await t.http.post('/api/list-note/search').set(acme.auth).send({ where: { rank: 2, score: 2.5 } });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ids(ok.body), n('n5'));
  const bad = await t.http.post('/api/list-note/search').set(acme.auth).send({ where: { rank: 1.5, score: '1e400', title: 5 } });
  assert.is(bad.status, 400);
  assert.equal(bad.body, badRequestBody(['where.rank must be an integer number', 'where.score must be a number', 'where.title must be a string']));
});

test('order on a field outside its sort list is a 400 listing its sortable fields', async () => {
  await expect400('order[score]=ASC', ["order: 'score' is not sortable; sortable: id, createdAt, updatedAt, title, rank"]);
  const byRank = await get('order[rank]=DESC&order[title]=ASC');
  assert.equal(ids(byRank.body), n('n2', 'n5', 'n1', 'n4', 'n7'));
});

// 9999-12-31T23:00:00-05:00 is year 10000 in UTC, which PostgreSQL refuses to store.
test('a date filter past year 9999 is a 400, not a 500', async () => {
  await expect400(`where[dueOn]=${encodeURIComponent('9999-12-31T23:00:00-05:00')}`, ['where.dueOn must be a valid ISO 8601 date string']);
});

test.run();
