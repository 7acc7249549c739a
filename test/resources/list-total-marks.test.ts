// Totals kept while their table's change mark stands (engine/resource/total-cache.ts,
// engine/db/change-marks.ts): a page whose table has not changed answers the total counted
// before, without counting; any write, through the API or straight into the database, moves the
// mark and the next page counts again. A row written with the triggers switched off (a superuser's
// session_replication_role = replica) moves no mark: it is how these tests see that a kept total
// was answered instead of a count.
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { foldChanges, foldEvery, vacuumChanges } from '../../engine/db/change-marks.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertEmployees, insertTags } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Session & { organizationId: string };
let acme: Tenant;
let other: Tenant;

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  await insertTags(t, acme, ['a1', 'a2', 'a3']);
  await insertTags(t, other, ['o1']);
});
test.after(async () => {
  await t.close();
});

async function totalOf(tenant: Tenant, query = '') {
  const res = await t.http.get(`/api/tags?${query}`).set(tenant.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.not.ok('@mark' in (res.body.items[0] ?? {}), 'the mark is never answered');
  return res.body.total as number;
}

/** A tag written with every trigger off: in the table, but no mark moved. */
async function unmarkedTag(tenant: Tenant, name: string) {
  await t.db.transaction(async (trx) => {
    await trx.raw('set local session_replication_role = replica');
    await trx('tag').insert({ id: randomUUID(), tenantId: tenant.tenantId, organizationId: tenant.organizationId, name, color: '#000000' });
  });
}

const countIn = async (tenant: Tenant) => Number((await t.db('tag').where({ tenantId: tenant.tenantId }).count({ n: '*' }))[0].n);

test('an unchanged table answers the total counted before, without counting', async () => {
  assert.is(await totalOf(acme), 3);
  await unmarkedTag(acme, 'hidden-1');
  assert.is(await countIn(acme), 4);
  assert.is(await totalOf(acme), 3, 'the kept total: the count did not run');
  // Another filter is another total, counted on its first page.
  assert.is(await totalOf(acme, 'where[name][ilike]=hidden%'), 1);
});

test('a write through the API moves the mark: its caller reads its own write', async () => {
  const created = await t.http.post('/api/tags').set(acme.auth).send({ name: 'api-made', color: '#ffffff' });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is(await totalOf(acme), await countIn(acme));
  assert.is(await totalOf(acme), 5);
  const removed = await t.http.delete(`/api/tags/${created.body.id}`).set(acme.auth);
  assert.is(removed.status, 204);
  assert.is(await totalOf(acme), 4);
});

test('a write straight into the database, by another client, moves the mark too', async () => {
  assert.is(await totalOf(acme), 4);
  await insertTags(t, acme, ['outside']);
  assert.is(await totalOf(acme), 5);
  await t.db('tag').where({ tenantId: acme.tenantId, name: 'outside' }).update({ name: 'outside-renamed' });
  assert.is(await totalOf(acme, 'where[name][ilike]=outside%'), 1);
  await t.db('tag').where({ tenantId: acme.tenantId, name: 'outside-renamed' }).delete();
  assert.is(await totalOf(acme), 4);
  assert.is(await totalOf(acme, 'where[name][ilike]=outside%'), 0);
});

test("another tenant's writes leave a tenant's kept total standing", async () => {
  assert.is(await totalOf(acme), 4);
  await unmarkedTag(acme, 'hidden-2');
  await insertTags(t, other, ['o2']);
  assert.is(await totalOf(other), 2);
  assert.is(await totalOf(acme), 4, "acme's mark did not move");
  await insertTags(t, acme, ['moves']);
  assert.is(await totalOf(acme), await countIn(acme));
  assert.is(await totalOf(acme), 6);
});

test('folding the change rows keeps every mark: kept totals stand, and the next write still moves them', async () => {
  assert.is(await totalOf(acme), 6);
  await unmarkedTag(acme, 'hidden-3');
  assert.ok((await foldChanges(t.db)) > 0, 'rows were folded');
  assert.is(Number((await t.db('row_change').count({ n: '*' }))[0].n), 0);
  assert.is(await totalOf(acme), 6, 'the mark is the same after the fold');
  await insertTags(t, acme, ['after-fold']);
  assert.is(await totalOf(acme), 8);
});

test('a client with rights on the table only may write it: the marks move with the rights of the trigger function', async () => {
  assert.is(await totalOf(acme), await countIn(acme));
  const role = `tag_writer_${Date.now()}`;
  const [{ schema }] = (await t.db.raw('select current_schema() as "schema"')).rows ?? (await t.db.raw('select current_schema() as "schema"'));
  await t.db.raw(`create role ${role}`);
  try {
    await t.db.raw(`grant usage on schema "${schema}" to ${role}`);
    await t.db.raw(`grant select, insert on "tag" to ${role}`);
    await t.db.transaction(async (trx) => {
      await trx.raw(`set local role ${role}`);
      await trx('tag').insert({ id: randomUUID(), tenantId: acme.tenantId, organizationId: acme.organizationId, name: 'by-a-writer', color: '#000000' });
    });
  } finally {
    await t.db.raw(`drop owned by ${role}`);
    await t.db.raw(`drop role ${role}`);
  }
  assert.is(await totalOf(acme), await countIn(acme));
  assert.is(await totalOf(acme, 'where[name]=by-a-writer'), 1);
});

test('/count and an empty page after a skip answer the kept total too, and count again once the mark moves', async () => {
  const own = await newTenant(t, 'Counting');
  await insertTags(t, own, ['c1', 'c2']);
  const countOf = async (query = '') => {
    const res = await t.http.get(`/api/tags/count?${query}`).set(own.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body, { total: res.body.total }, 'the mark is never answered');
    assert.is(res.headers['x-total-exact'], 'true');
    return res.body.total as number;
  };
  const emptyPage = async () => {
    const res = await t.http.get('/api/tags?skip=100').set(own.auth);
    assert.equal([res.status, res.body.items], [200, []], JSON.stringify(res.body));
    return res.body.total as number;
  };
  assert.is(await countOf(), 2);
  await unmarkedTag(own, 'hidden-c');
  assert.is(await countIn(own), 3);
  assert.is(await countOf(), 2, 'the kept total: the count did not run');
  assert.is(await totalOf(own), 2, "a list of the same filters shares /count's kept total");
  assert.is(await emptyPage(), 2, 'an empty page after a skip: the kept total');
  assert.is(await countOf('where[name][ilike]=hidden%'), 1, 'other filters: counted');
  // A write outside the API moves the mark: every way of asking counts again.
  await insertTags(t, own, ['c4']);
  assert.is(await countOf(), 4);
  await unmarkedTag(own, 'hidden-d');
  assert.is(await emptyPage(), 4, 'kept by /count, answered by the empty page');
  const created = await t.http.post('/api/tags').set(own.auth).send({ name: 'c6', color: '#ffffff' });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is(await emptyPage(), 6);
  assert.is(await countOf(), 6);
  assert.is(await countIn(own), 6);
});

test('an empty page after a cursor answers the kept total of its filters', async () => {
  const own = await newTenant(t, 'Cursor');
  await insertTags(t, own, ['k1', 'k2', 'k3']);
  const first = await t.http.get('/api/tags?take=2&order[name]=ASC').set(own.auth);
  assert.equal([first.status, first.body.total, first.body.items.length], [200, 3, 2], JSON.stringify(first.body));
  // The last tag goes with every trigger off: the page after the cursor is empty, and no mark moved.
  await t.db.transaction(async (trx) => {
    await trx.raw('set local session_replication_role = replica');
    await trx('tag').where({ tenantId: own.tenantId, name: 'k3' }).delete();
  });
  const after = await t.http.get(`/api/tags?take=2&order[name]=ASC&cursor=${first.body.nextCursor}`).set(own.auth);
  assert.equal([after.status, after.body.items, after.body.total], [200, [], 3], JSON.stringify(after.body));
  // A write that moves the mark: counted again.
  await insertTags(t, own, ['k4']);
  const again = await t.http.get(`/api/tags?take=2&order[name]=ASC&cursor=${first.body.nextCursor}`).set(own.auth);
  assert.equal([again.status, again.body.items.map((i: { name: string }) => i.name), again.body.total], [200, ['k4'], 3]);
});

test('folding vacuums the change tables: at the first fold, then after every so many rows folded', async () => {
  const own = await newTenant(t, 'Churn');
  const vacuums: string[] = [];
  const failures: unknown[] = [];
  // The real vacuum, recorded: the app's own folding (every two seconds) vacuums too, unrecorded.
  const vacuum = async (db: typeof t.db) => {
    await vacuumChanges(db);
    vacuums.push('done');
  };
  const until = async (done: () => boolean) => {
    const deadline = Date.now() + 10_000;
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  const stop = foldEvery(t.db, 5, async () => true, (err) => failures.push(err), { vacuumAfterRows: 100, vacuum });
  try {
    await until(() => vacuums.length > 0);
    assert.is(vacuums.length, 1, 'the first fold vacuums what was left before');
    // Each insert is a statement of its own: a change row each.
    for (let i = 0; i < 40; i++) await insertTags(t, own, [`churn-${i}`]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.is(vacuums.length, 1, 'fewer rows folded than the threshold: no vacuum');
    for (let i = 40; i < 260; i++) await insertTags(t, own, [`churn-${i}`]);
    await until(() => vacuums.length > 1);
    assert.ok(vacuums.length > 1, 'past the threshold: vacuumed again');
  } finally {
    stop();
  }
  assert.equal(failures, []);
  assert.is(Number((await t.db('row_change').count({ n: '*' }))[0].n) < 260, true, 'the rows were folded');
  assert.is(await totalOf(own), 260, 'the marks stand after the vacuums');
  await insertTags(t, own, ['after-vacuum']);
  assert.is(await totalOf(own), 261);
});

test('a vacuum that fails is reported in its own words, and folding goes on', async () => {
  const own = await newTenant(t, 'Failing vacuum');
  const failures: unknown[] = [];
  let folded = false;
  const stop = foldEvery(t.db, 5, async () => true, (err) => failures.push(err), {
    vacuumAfterRows: 1,
    vacuum: async () => {
      throw new Error('no vacuum today');
    },
  });
  try {
    const deadline = Date.now() + 10_000;
    while (failures.length < 2 && Date.now() < deadline) {
      await insertTags(t, own, [`v-${failures.length}-${Date.now()}`]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    folded = Number((await t.db('row_change_sum').where({ tableName: 'tag', tenantId: own.tenantId }).sum({ n: 'changes' }))[0].n) > 0;
  } finally {
    stop();
  }
  assert.ok(failures.length >= 2, 'each failure is reported, and the loop went on after the first');
  assert.match(String((failures[0] as Error).message), /^vacuuming the change tables failed: no vacuum today$/);
  assert.ok(folded, 'the folds themselves went on');
  assert.is(await totalOf(own), await countIn(own));
});

test('withDeleted is a total of its own: the live records\' kept total never answers it, nor it theirs', async () => {
  const own = await newTenant(t, 'Deleted');
  const ids: string[] = [];
  for (const title of ['t1', 't2', 't3']) {
    const res = await t.http.post('/api/task').set(own.auth).send({ title, organizationId: own.organizationId });
    assert.is(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.id);
  }
  assert.is((await t.http.delete(`/api/task/${ids[0]}`).set(own.auth)).status, 204);
  const total = async (path: string) => {
    const res = await t.http.get(path).set(own.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    return res.body.total as number;
  };
  assert.is(await total('/api/task'), 2);
  assert.is(await total('/api/task?withDeleted=true'), 3, 'counted, not the live total kept a moment ago');
  assert.is(await total('/api/task/count?withDeleted=true'), 3);
  assert.is(await total('/api/task/count'), 2, 'the live total, kept apart');
  assert.is(await total('/api/task'), 2);
});

test('a total whose count reads another table (a relation filter, tags) is counted on every page', async () => {
  const owner = await newTenant(t, 'Relations');
  const [employee] = await insertEmployees(t, owner, [{ firstName: 'Kim' }]);
  const user = await t.db('user').where({ id: employee.userId }).first();
  const byEmail = `/api/employee?where[user][email]=${encodeURIComponent(user.email)}`;
  const first = await t.http.get(byEmail).set(owner.auth);
  assert.equal([first.status, first.body.total], [200, 1]);
  // The user's email changes without a mark on the employee table: the next page still counts.
  await t.db.transaction(async (trx) => {
    await trx.raw('set local session_replication_role = replica');
    await trx('user').where({ id: user.id }).update({ email: `moved-${user.email}` });
  });
  const again = await t.http.get(byEmail).set(owner.auth);
  assert.equal([again.status, again.body.total], [200, 0]);
});

test.run();
