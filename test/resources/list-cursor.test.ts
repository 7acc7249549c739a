// Cursor pages: nextCursor and Link rel="next" while more items follow; ?cursor=… continues after
// the last item by keyset on the order and the id, ascending or descending, over empty values and
// timestamps a microsecond apart, giving exactly what skip gives; a cursor of another resource,
// order, filter or tenant, an altered one, or one with skip, is a 400; count=none (or Prefer:
// count=none) skips the count.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { badRequestBody, ids, insertEmployees } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
let other: Tenant;
const COUNT = 9;

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  // createdAt a microsecond apart (one millisecond for JavaScript), rates repeating, some empty.
  await insertEmployees(
    t,
    acme,
    Array.from({ length: COUNT }, (_, i) => ({
      firstName: `E${i}`,
      createdAt: `2026-01-01T00:00:00.00000${i}Z`,
      billRateValue: i % 3 === 0 ? null : (i % 4) * 10,
    })),
  );
});
test.after(async () => {
  await t.close();
});

const get = (query: string, who: Tenant = acme) => t.http.get(`/api/employee?${query}`).set(who.auth);

/** Every page of `query` by cursor, `take` at a time: the ids in order, and each answer. */
async function walk(query: string, take: number) {
  const seen: string[] = [];
  const answers: Array<{ status: number; body: any; headers: Record<string, string> }> = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const res = await get(`${query}&take=${take}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.is(res.status, 200, JSON.stringify(res.body));
    answers.push(res);
    seen.push(...ids(res.body));
    cursor = res.body.nextCursor;
    if (!cursor) break;
  }
  return { seen, answers };
}

test('walking by cursor gives what skip gives, the default order included; the last page has no nextCursor', async () => {
  const all = await get('take=50');
  assert.is(all.body.total, COUNT);
  assert.is(all.body.nextCursor, undefined);
  const { seen, answers } = await walk('', 2);
  assert.equal(seen, ids(all.body));
  assert.is(answers.length, 5);
  for (const answer of answers.slice(0, -1)) {
    assert.type(answer.body.nextCursor, 'string');
    assert.is(answer.body.total, COUNT);
    assert.match(answer.headers.link, /^<\/api\/employee\?take=2&cursor=[^>]+>; rel="next"$/);
  }
  assert.is(answers[4].headers.link, undefined);
  // Paged by skip, the exact total says whether more follow: the page that ends the list has no cursor.
  const ending = await get('take=4&skip=5');
  assert.equal([ids(ending.body).length, ending.body.total, ending.body.nextCursor], [4, COUNT, undefined]);
  const before = await get('take=4&skip=4');
  assert.type(before.body.nextCursor, 'string');
  const after = await get(`take=4&cursor=${encodeURIComponent(before.body.nextCursor)}`);
  assert.equal(ids(after.body), ids(all.body).slice(8));
});

test('any order, either direction, over empty and repeated values: the same records in the same order as one page', async () => {
  for (const order of ['order[billRateValue]=ASC', 'order[billRateValue]=DESC', 'order[billRateValue]=DESC&order[firstName]=ASC', 'order[createdAt]=ASC']) {
    const whole = await get(`${order}&take=50`);
    for (const take of [1, 2, 4]) {
      const { seen } = await walk(order, take);
      assert.equal(seen, ids(whole.body), `${order}, take ${take}`);
    }
  }
});

test('a cursor keeps its filter: the walk of a filtered list, and a search body continues with the cursor too', async () => {
  const filter = 'where[billRateValue][isNull]=false';
  const whole = await get(`${filter}&take=50`);
  const { seen } = await walk(filter, 2);
  assert.equal(seen, ids(whole.body));
  const first = await t.http.post('/api/employee/search').set(acme.auth).send({ where: { billRateValue: { isNull: false } }, take: 3 });
  assert.is(first.headers.link, undefined);
  const second = await t.http.post('/api/employee/search').set(acme.auth).send({ where: { billRateValue: { isNull: false } }, take: 3, cursor: first.body.nextCursor });
  assert.is(second.status, 200, JSON.stringify(second.body));
  assert.equal([...ids(first.body), ...ids(second.body)], ids(whole.body));
});

test('refused: another order, filter, resource or tenant; an altered cursor; a cursor with skip; an empty one', async () => {
  const { body } = await get('take=2&order[firstName]=ASC');
  const cursor = encodeURIComponent(body.nextCursor);
  const INVALID = 'cursor is not valid for this list: it was made for another resource, order or filter, or altered; start again without it';
  const other400 = async (res: { status: number; body: unknown }, message: string) => {
    assert.is(res.status, 400);
    assert.equal(res.body, badRequestBody([message]));
  };
  await other400(await get(`cursor=${cursor}&order[firstName]=DESC`), 'cursor was made for the order firstName ASC, id ASC: send the same order with it, or start again without it');
  await other400(await get(`cursor=${cursor}&order[firstName]=ASC&where[isActive]=true`), INVALID);
  await other400(await t.http.get(`/api/skill?cursor=${cursor}&order[createdAt]=ASC`).set(acme.auth), INVALID);
  await other400(await get(`cursor=${cursor}&order[firstName]=ASC`, other), INVALID);
  const raw: string = body.nextCursor;
  const altered = raw.slice(0, 5) + (raw[5] === 'A' ? 'B' : 'A') + raw.slice(6);
  await other400(await get(`cursor=${encodeURIComponent(altered)}&order[firstName]=ASC`), INVALID);
  await other400(await get('cursor=abc&order[firstName]=ASC'), INVALID);
  await other400(await get(`cursor=${cursor}&order[firstName]=ASC&skip=2`), 'cursor and skip must not be sent together: a cursor page starts after the item the cursor names');
  await other400(await get('cursor='), 'cursor must be a non-empty string: the nextCursor of the page before');
  // The right cursor still works after all that.
  assert.is((await get(`cursor=${cursor}&order[firstName]=ASC`)).status, 200);
});

test('count=none and Prefer: count=none skip the count: total is a lower bound, X-Total-Exact says so', async () => {
  const first = await get('take=4&count=none');
  assert.equal([first.status, first.body.total, first.headers['x-total-exact']], [200, 5, 'false']);
  assert.is(ids(first.body).length, 4);
  const last = await get('take=4&skip=8&count=none');
  assert.equal([last.body.total, last.headers['x-total-exact'], last.body.nextCursor], [COUNT, 'true', undefined]);
  const preferred = await get('take=4').set('Prefer', 'count=none');
  assert.equal([preferred.body.total, preferred.headers['preference-applied']], [5, 'count=none']);
  assert.equal((await get('count=some')).body, badRequestBody(['count must be none (leave it out for the total)']));
});

test.run();
