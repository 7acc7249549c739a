// ETags, If-None-Match and If-Match on the generated routes: what each answer carries, when a
// read is a 304, when a write is a 412 or a 428, and what the database holds after each.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { test } from 'uvu';
import { RESOURCES_DIR } from '../../app/paths.js';
import { CONCURRENT_WRITE } from '../../engine/db/errors.js';
import * as assert from 'uvu/assert';
import { newTenant, PASSWORD, uniqueEmail, type Session } from '../helpers/accounts.js';
import { createTestApp, usingPostgres, type TestApp } from '../helpers/app.js';
import { assertError, assertNotFound } from '../helpers/error-envelope.js';

type Admin = Session & { organizationId: string };

let t: TestApp;
let admin: Admin;
let other: Admin;
const tagIds: string[] = [];

const STRONG = /^"[0-9a-f]{1,16}"$/;
const SHAPED = /^"[0-9a-f]{1,16}\.[A-Za-z0-9_-]{16}"$/;
const WEAK = /^W\/"[A-Za-z0-9_-]{16}"$/;

const fixtureDir = fileURLToPath(new URL('../fixtures/ledger', import.meta.url));
const fixtureMigrations = fileURLToPath(new URL('../fixtures/ledger/migrations', import.meta.url));

async function created(session: Session, path: string, body: Record<string, unknown>): Promise<{ id: string; etag: string }> {
  const res = await t.http.post(`/api/${path}`).set(session.auth).send(body);
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.ok(STRONG.test(res.headers.etag) || SHAPED.test(res.headers.etag), `a created record is tagged: ${res.headers.etag}`);
  return { id: res.body.id, etag: res.headers.etag };
}

const newTag = (name: string, session: Session = admin) => created(session, 'tags', { name, color: '#123456' });
const etagOf = async (path: string) => (await t.http.get(path).set(admin.auth)).headers.etag as string;
const tagRow = (id: string) => t.db('tag').where({ id }).first();

/** Every held transaction, ended by test.after.each if a failed test left it open (closing the app would wait for it forever). */
const holds: Knex.Transaction[] = [];

/**
 * A transaction of the test's own, held open, and a wait until `n` other connections wait for
 * its locks, directly or behind one another (at most 5 s, else the test fails: a write that never waited proves nothing). PostgreSQL only.
 */
async function holdingTransaction() {
  const hold = await t.db.transaction();
  holds.push(hold);
  const [{ pid, superuser }] = (await hold.raw(`select pg_backend_pid() as pid, current_setting('is_superuser') = 'on' as superuser`)).rows;
  // In a deadlock PostgreSQL undoes the waiter whose deadlock_timeout ends first. The request is to
  // be the one undone, so a hold waits 10 s before it looks (a superuser's setting; without it the
  // order the waits began decides, as a rule the same way, but not on a machine this busy).
  if (superuser) await hold.raw(`set local deadlock_timeout = '10s'`);
  const waiters = async (n: number) => {
    // Only ends a wait that would hang: on a busy machine a retried write may take seconds to queue.
    const deadline = Date.now() + 20_000;
    for (;;) {
      // Blocked by the hold, or by a write queued behind it for the same row.
      const [{ waiting }] = (
        await t.db.raw(
          `with recursive blocked(pid) as (select pid from pg_stat_activity where ? = any(pg_blocking_pids(pid))
             union select a.pid from pg_stat_activity a join blocked b on b.pid = any(pg_blocking_pids(a.pid)))
           select count(*)::int as waiting from blocked`,
          [pid],
        )
      ).rows;
      if (waiting >= n) return;
      if (Date.now() > deadline) {
        await hold.rollback();
        throw new Error(`${waiting} of ${n} writes came to wait for the held transaction`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return Object.assign(hold, { waiters });
}

async function newEmployee(): Promise<{ id: string; etag: string }> {
  const user = await t.http.post('/api/auth/register').set(admin.auth).send({ user: { email: uniqueEmail('cond'), firstName: 'C', lastName: 'R' }, password: PASSWORD });
  assert.is(user.status, 201, JSON.stringify(user.body));
  return created(admin, 'employee', { firstName: 'Cora', lastName: 'Reyes', userId: user.body.id });
}

test.before(async () => {
  t = await createTestApp({ resourceDirs: [RESOURCES_DIR, fixtureDir], migrationDirs: [fixtureMigrations] });
  admin = await newTenant(t);
  other = await newTenant(t, 'Other');
  for (const name of ['cond-a', 'cond-b']) tagIds.push((await newTag(name)).id);
});
test.after.each(async () => {
  for (const hold of holds.splice(0)) if (!hold.isCompleted()) await hold.rollback();
});

test.after(async () => {
  await t.close();
});

test('GET by id: a strong ETag, the same while the record is unchanged; If-None-Match gives 304 without a body', async () => {
  const { id, etag } = await newTag('plain');
  const first = await t.http.get(`/api/tags/${id}`).set(admin.auth);
  assert.is(first.status, 200);
  assert.match(first.headers.etag, STRONG);
  assert.is(first.headers.etag, etag, 'the create answered the tag a read gives');
  assert.is((await t.http.get(`/api/tags/${id}`).set(admin.auth)).headers.etag, etag);

  for (const sent of [etag, `W/${etag}`, '*', `"other", ${etag}`, ` ${etag} ,`]) {
    const res = await t.http.get(`/api/tags/${id}`).set(admin.auth).set('If-None-Match', sent);
    assert.is(res.status, 304, sent);
    assert.is(res.text, '', `${sent}: no body`);
    assert.is(res.headers.etag, etag, `${sent}: the tag is repeated`);
  }
  for (const sent of ['"0123456789abcdef0123456789abcdef"', `W/"x", "y"`]) {
    const res = await t.http.get(`/api/tags/${id}`).set(admin.auth).set('If-None-Match', sent);
    assert.is(res.status, 200, sent);
    assert.is(res.body.id, id);
  }
});

test('the tag changes with the record: a write through the API, and a write by another client of the database', async () => {
  const { id, etag } = await newTag('changing');
  const patched = await t.http.patch(`/api/tags/${id}`).set(admin.auth).send({ color: '#000000' });
  assert.is(patched.status, 200);
  assert.match(patched.headers.etag, STRONG);
  assert.is.not(patched.headers.etag, etag);
  assert.is(await etagOf(`/api/tags/${id}`), patched.headers.etag, 'the write answered the tag the next read gives');

  await t.db('tag').where({ id }).update({ description: 'written beside the API' });
  const after = await etagOf(`/api/tags/${id}`);
  assert.is.not(after, patched.headers.etag);
  const stale = await t.http.get(`/api/tags/${id}`).set(admin.auth).set('If-None-Match', patched.headers.etag);
  assert.is(stale.status, 200, 'a stale copy is answered in full');
  assert.is(stale.body.description, 'written beside the API');
});

test('writes of writable relations through the API move the version: links through the record, children through their own route', async () => {
  const employee = await newEmployee();
  const linked = await t.http.patch(`/api/employee/${employee.id}`).set(admin.auth).send({ tags: [{ id: tagIds[0] }] });
  assert.is(linked.status, 200, JSON.stringify(linked.body));
  assert.is.not(linked.headers.etag, employee.etag);
  assert.is(await etagOf(`/api/employee/${employee.id}`), linked.headers.etag, 'the tag of a write with links is the one read after it');

  const unlinked = await t.http.patch(`/api/employee/${employee.id}`).set(admin.auth).send({ tags: [] });
  assert.is.not(unlinked.headers.etag, linked.headers.etag, 'links removed through the API move it again');

  const invoice = await created(admin, 'invoice', {
    invoiceNumber: 9001,
    invoiceDate: '2026-03-01',
    dueDate: '2026-03-31',
    fromOrganizationId: admin.organizationId,
    currency: 'EUR',
    invoiceItems: [{ quantity: 1, price: 10 }],
  });
  const readInvoice = await t.http.get(`/api/invoice/${invoice.id}`).set(admin.auth);
  assert.match(readInvoice.headers.etag, STRONG);
  // The create answered its items too: that answer's tag is shaped, on the version a read finds.
  assert.match(invoice.etag, SHAPED);
  assert.is(`${invoice.etag.split('.')[0]}"`, readInvoice.headers.etag);
  const [item] = await t.db('invoice_item').where({ invoiceId: invoice.id });
  const changed = await t.http.patch(`/api/invoice-item/${item.id}`).set(admin.auth).send({ price: 12 });
  assert.is(changed.status, 200, JSON.stringify(changed.body));
  const afterChange = await etagOf(`/api/invoice/${invoice.id}`);
  assert.is.not(afterChange, readInvoice.headers.etag, "a child changed by its own route moves the parent's tag");
  const added = await t.http.post('/api/invoice-item').set(admin.auth).send({ invoiceId: invoice.id, quantity: 2, price: 5 });
  assert.is(added.status, 201, JSON.stringify(added.body));
  const afterAdd = await etagOf(`/api/invoice/${invoice.id}`);
  assert.is.not(afterAdd, afterChange, 'a child created by its own route moves it');
  assert.is((await t.http.delete(`/api/invoice-item/${added.body.id}`).set(admin.auth)).status, 204);
  assert.is.not(await etagOf(`/api/invoice/${invoice.id}`), afterAdd, 'a child deleted by its own route moves it');
  // A child moved to another parent changes both: the one it joins and the one it leaves.
  const other = await created(admin, 'invoice', { invoiceNumber: 9002, invoiceDate: '2026-03-01', dueDate: '2026-03-31', fromOrganizationId: admin.organizationId, currency: 'EUR' });
  const [leftTag, joinedTag] = [await etagOf(`/api/invoice/${invoice.id}`), await etagOf(`/api/invoice/${other.id}`)];
  const moved = await t.http.patch(`/api/invoice-item/${item.id}`).set(admin.auth).send({ invoiceId: other.id });
  assert.is(moved.status, 200, JSON.stringify(moved.body));
  assert.is.not(await etagOf(`/api/invoice/${other.id}`), joinedTag, 'the parent a child joins moves');
  assert.is.not(await etagOf(`/api/invoice/${invoice.id}`), leftTag, 'the parent a child leaves moves');
  // A write that changes nothing (If-Match on a stale version) touches no parent.
  const [leftNow, joinedNow] = [await etagOf(`/api/invoice/${invoice.id}`), await etagOf(`/api/invoice/${other.id}`)];
  const stale = await t.http.patch(`/api/invoice-item/${item.id}`).set(admin.auth).set('If-Match', '"0"').send({ invoiceId: invoice.id });
  assert.is(stale.status, 412);
  assert.is(await etagOf(`/api/invoice/${invoice.id}`), leftNow);
  assert.is(await etagOf(`/api/invoice/${other.id}`), joinedNow);
  // Another tenant's invoice is never touched by this tenant's items: the touch is held to the item's tenant.
  assert.is((await t.db('invoice').where({ id: invoice.id }).first()).tenantId, admin.tenantId);
});

test('a shaped answer (relations[], select[], written children) has a tag of its own', async () => {
  const employee = await newEmployee();
  const plain = await etagOf(`/api/employee/${employee.id}`);
  const version = plain.slice(1, -1);
  const withUser = await t.http.get(`/api/employee/${employee.id}?relations[]=user`).set(admin.auth);
  const selected = await t.http.get(`/api/employee/${employee.id}?select[]=firstName`).set(admin.auth);
  for (const res of [withUser, selected]) {
    assert.is(res.status, 200);
    assert.match(res.headers.etag, SHAPED);
    assert.ok(res.headers.etag.startsWith(`"${version}.`), 'the same version, another shape');
    assert.match(res.headers['content-type'], /^application\/json/);
  }
  assert.is.not(withUser.headers.etag, selected.headers.etag);
  assert.equal(selected.body, { id: employee.id, firstName: 'Cora' });
  assert.is((await t.http.get(`/api/employee/${employee.id}?relations[]=user`).set(admin.auth).set('If-None-Match', withUser.headers.etag)).status, 304);
  assert.is((await t.http.get(`/api/employee/${employee.id}?relations[]=user`).set(admin.auth).set('If-None-Match', plain)).status, 200, 'the plain tag is not this shape');
  assert.is((await t.http.get(`/api/employee/${employee.id}`).set(admin.auth).set('If-None-Match', withUser.headers.etag)).status, 200);
});

test('If-Match: the current tag (or *) lets a write through; a stale one is 412 and nothing changes', async () => {
  const { id, etag } = await newTag('guarded');
  const before = await tagRow(id);

  const current = await t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', etag).send({ color: '#111111' });
  assert.is(current.status, 200, JSON.stringify(current.body));
  const fresh = current.headers.etag;

  for (const [method, send] of [
    ['patch', { color: '#222222' }],
    ['put', { name: 'guarded', color: '#222222' }],
  ] as const) {
    const stale = await t.http[method](`/api/tags/${id}`).set(admin.auth).set('If-Match', etag).send(send);
    assertError(stale, 412, /changed since the ETag/);
    assert.is((await tagRow(id)).color, '#111111', `${method}: untouched`);
  }
  // A weak tag never meets a write's strong comparison, even the current version's.
  assertError(await t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', `W/${fresh}`).send({ color: '#333333' }), 412);
  assertError(await t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', '"not-a-version"').send({ color: '#333333' }), 412);
  assert.is((await tagRow(id)).color, '#111111');

  const listed = await t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', `${etag}, ${fresh}`).send({ color: '#444444' });
  assert.is(listed.status, 200, 'any tag of the list may be the current one');
  const any = await t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', '*').send({ color: '#555555' });
  assert.is(any.status, 200);
  assert.ok((await tagRow(id)).updatedAt > before.updatedAt);

  // A shaped answer's tag names the same version.
  const shaped = (await t.http.get(`/api/tags/${id}?select[]=name`).set(admin.auth)).headers.etag;
  assert.match(shaped, SHAPED);
  assert.is((await t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', shaped).send({ color: '#666666' })).status, 200);
});

test('If-Match on DELETE: stale is 412 and the record stays; current deletes it', async () => {
  const { id, etag } = await newTag('deleted');
  await t.http.patch(`/api/tags/${id}`).set(admin.auth).send({ color: '#010101' });
  assertError(await t.http.delete(`/api/tags/${id}`).set(admin.auth).set('If-Match', etag), 412);
  assert.ok(await tagRow(id), 'still there');
  const current = await etagOf(`/api/tags/${id}`);
  assert.is((await t.http.delete(`/api/tags/${id}`).set(admin.auth).set('If-Match', current)).status, 204);
  assert.not.ok(await tagRow(id));
  // No record: 404, whatever If-Match says.
  assertNotFound(await t.http.delete(`/api/tags/${id}`).set(admin.auth).set('If-Match', current));
  assertNotFound(await t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', '*').send({ color: '#020202' }));
});

test("If-Match never reveals another tenant's record: 404, as without it", async () => {
  const theirs = await newTag('theirs', other);
  for (const sent of [theirs.etag, '"0123456789abcdef0123456789abcdef"', '*']) {
    assertNotFound(await t.http.patch(`/api/tags/${theirs.id}`).set(admin.auth).set('If-Match', sent).send({ color: '#000000' }));
    assertNotFound(await t.http.delete(`/api/tags/${theirs.id}`).set(admin.auth).set('If-Match', sent));
  }
  assert.is((await tagRow(theirs.id)).color, '#123456');
});

test('a malformed If-Match or If-None-Match is a 400 naming the header, and nothing changes', async () => {
  const { id } = await newTag('malformed');
  for (const sent of ['abc', '"unclosed', 'W/abc', '"a" "b"', ',', Array.from({ length: 65 }, (_, i) => `"${i}"`).join(',')]) {
    assertError(await t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', sent).send({ color: '#999999' }), 400, /If-Match/);
    assertError(await t.http.get(`/api/tags/${id}`).set(admin.auth).set('If-None-Match', sent), 400, /If-None-Match/);
  }
  // Sent empty, If-Match names no version: a 400, never an unconditional write.
  assertError(await t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', '').send({ color: '#999999' }), 400, /If-Match/);
  assert.is((await tagRow(id)).color, '#123456');
});

test('a write with links and a stale If-Match writes neither the row nor the links', async () => {
  const employee = await newEmployee();
  await t.http.patch(`/api/employee/${employee.id}`).set(admin.auth).send({ firstName: 'Changed' });
  const stale = await t.http.patch(`/api/employee/${employee.id}`).set(admin.auth).set('If-Match', employee.etag).send({ lastName: 'Never', tags: [{ id: tagIds[0] }] });
  assertError(stale, 412);
  assert.is((await t.db('employee').where({ id: employee.id }).first()).lastName, 'Reyes');
  assert.equal(await t.db('tag_employee').where({ employeeId: employee.id }), [], 'no link written');
});

test('lists: a weak ETag over the page; the same page again is a 304, a changed one is answered', async () => {
  await newTag('listed');
  const path = '/api/tags?order[name]=ASC&take=3';
  const first = await t.http.get(path).set(admin.auth);
  assert.is(first.status, 200);
  assert.match(first.headers.etag, WEAK);
  assert.match(first.headers['content-type'], /^application\/json/);
  assert.is((await t.http.get(path).set(admin.auth)).headers.etag, first.headers.etag);
  const unchanged = await t.http.get(path).set(admin.auth).set('If-None-Match', first.headers.etag);
  assert.is(unchanged.status, 304);
  assert.is(unchanged.text, '');
  assert.is((await t.http.get(`/api/tags/pagination?order[name]=ASC&take=3`).set(admin.auth).set('If-None-Match', first.headers.etag)).status, 304, 'the other spelling, the same page');

  await newTag('aaa-first');
  const changed = await t.http.get(path).set(admin.auth).set('If-None-Match', first.headers.etag);
  assert.is(changed.status, 200);
  assert.is(changed.body.items[0].name, 'aaa-first');
  assert.is.not(changed.headers.etag, first.headers.etag);
  // Another tenant's same query is another page, with another tag.
  assert.is.not((await t.http.get(path).set(other.auth)).headers.etag, changed.headers.etag);
  // POST /search answers a list but is no read a cache may validate.
  const searched = await t.http.post('/api/tags/search').set(admin.auth).send({ take: 3 });
  assert.is(searched.status, 200);
  assert.is(searched.headers.etag, undefined);
});

test('two writers holding the same tag: exactly one wins, the other is 412', async () => {
  const { id, etag } = await newTag('raced');
  // On PostgreSQL both writes are held at the row's lock until both have started, so each has
  // passed anything checked before its statement: only the statement's own check tells them apart.
  const hold = usingPostgres() ? await holdingTransaction() : undefined;
  if (hold) await hold('tag').where({ id }).forUpdate();
  const racing = ['#aa0000', '#00aa00'].map((color) => t.http.patch(`/api/tags/${id}`).set(admin.auth).set('If-Match', etag).send({ color }).then((res) => res));
  if (hold) {
    await hold.waiters(2);
    await hold.commit();
  }
  const answers = await Promise.all(racing);
  assert.equal(answers.map((res) => res.status).sort(), [200, 412], JSON.stringify(answers.map((res) => res.body)));
  const winner = answers.find((res) => res.status === 200)!;
  assert.is((await tagRow(id)).color, winner.body.color, "the winner's write is the one stored");
});

const invoiceBody = (invoiceNumber: number) => ({ invoiceNumber, invoiceDate: '2026-03-01', dueDate: '2026-03-31', fromOrganizationId: admin.organizationId, currency: 'EUR' });

/**
 * Two items of a new invoice: one changed and one deleted through the API while `hold`, with
 * `moveTo` having moved both into another invoice it returns, waits to commit. Both are written
 * (200, 204), in the invoice they were moved to.
 */
async function writtenWhileMoved(invoiceNumber: number, moveTo: (hold: Knex.Transaction, itemIds: string[], from: string) => Promise<string>) {
  const first = await created(admin, 'invoice', { ...invoiceBody(invoiceNumber), invoiceItems: [{ quantity: 1, price: 10 }, { quantity: 2, price: 20 }] });
  const [changing, deleting] = await t.db('invoice_item').where({ invoiceId: first.id }).orderBy('quantity');
  const hold = await holdingTransaction();
  const target = await moveTo(hold, [changing.id, deleting.id], first.id);
  const writes = [
    t.http.patch(`/api/invoice-item/${changing.id}`).set(admin.auth).send({ price: 15 }).then((res) => res),
    t.http.delete(`/api/invoice-item/${deleting.id}`).set(admin.auth).then((res) => res),
  ];
  await hold.waiters(2);
  await hold.commit();
  const [changed, deleted] = await Promise.all(writes);
  assert.is(changed.status, 200, JSON.stringify(changed.body));
  assert.equal([changed.body.invoiceId, changed.body.price], [target, 15]);
  assert.equal(await t.db('invoice_item').where({ id: changing.id }).first('invoiceId', 'price'), { invoiceId: target, price: 15 });
  assert.is(deleted.status, 204, JSON.stringify(deleted.body));
  assert.is(await t.db('invoice_item').where({ id: deleting.id }).first(), undefined);
}

(usingPostgres() ? test : test.skip)('a child changed or deleted while another move of it commits: written, not a 404', async () => {
  const second = await created(admin, 'invoice', invoiceBody(9202));
  await writtenWhileMoved(9201, async (hold, itemIds) => {
    await hold('invoice_item').whereIn('id', itemIds).update({ invoiceId: second.id });
    return second.id;
  });
});

(usingPostgres() ? test : test.skip)('a child changed or deleted while another transaction creates an invoice and moves it there: written', async () => {
  // The new invoice is not in the snapshot of a statement that began before it was committed.
  await writtenWhileMoved(9301, async (hold, itemIds, from) => {
    const copy = { ...(await hold('invoice').where({ id: from }).first()), id: randomUUID(), invoiceNumber: 9302 };
    await hold('invoice').insert(copy);
    await hold('invoice_item').whereIn('id', itemIds).update({ invoiceId: copy.id });
    return copy.id;
  });
});

const invoiceChange = { currency: 'USD', invoiceItems: [{ quantity: 3, price: 30 }] };

/** A new invoice of one item, and what the database holds of it: its currency and its items. */
async function invoiceOfOneItem(invoiceNumber: number) {
  const invoice = await created(admin, 'invoice', { ...invoiceBody(invoiceNumber), invoiceItems: [{ quantity: 1, price: 10 }] });
  const stored = async () => ({
    currency: (await t.db('invoice').where({ id: invoice.id }).first()).currency,
    items: await t.db('invoice_item').where({ invoiceId: invoice.id }).select('quantity', 'price'),
  });
  return { invoice, stored };
}

/**
 * `hold` changes the invoice while the PATCH, having changed it, waits for an item `hold` has
 * locked: a deadlock PostgreSQL breaks by undoing the PATCH (its wait began first, so its check
 * finds the cycle first). Resolves when `hold`'s change is made.
 */
async function deadlock(hold: Knex.Transaction & { waiters(n: number): Promise<void> }, invoiceId: string) {
  await hold.waiters(1);
  await hold('invoice').where({ id: invoiceId }).update({ updatedAt: hold.fn.now() });
}

(usingPostgres() ? test : test.skip)('an invoice written with its items while another transaction holds an item, then the invoice: undone once, written once that transaction ends', async () => {
  const { invoice, stored } = await invoiceOfOneItem(9401);
  const hold = await holdingTransaction();
  await hold('invoice_item').where({ invoiceId: invoice.id }).forUpdate();
  const writing = t.http.patch(`/api/invoice/${invoice.id}`).set(admin.auth).send(invoiceChange).then((res) => res);
  // The hold's change went through while the PATCH had changed the invoice: the PATCH was undone.
  await deadlock(hold, invoice.id);
  // Run again, the PATCH now waits for the invoice the hold changed.
  await hold.waiters(1);
  await hold.commit();
  const written = await writing;
  assert.is(written.status, 200, JSON.stringify(written.body));
  assert.is(written.body.currency, 'USD');
  assert.equal(await stored(), { currency: 'USD', items: [{ quantity: 3, price: 30 }] });
});

(usingPostgres() ? test : test.skip)('an invoice write undone twice by deadlocks: a 503 to send again, nothing written', async () => {
  const { invoice, stored } = await invoiceOfOneItem(9402);
  // Two transactions share the item's lock: the PATCH meets each in turn.
  const [first, second] = [await holdingTransaction(), await holdingTransaction()];
  for (const hold of [first, second]) await hold('invoice_item').where({ invoiceId: invoice.id }).forShare();
  const writing = t.http.patch(`/api/invoice/${invoice.id}`).set(admin.auth).send(invoiceChange).then((res) => res);
  await deadlock(first, invoice.id);
  // Run again, the PATCH waits for the invoice, then (the first hold ended) for the second's item.
  await first.waiters(1);
  await first.commit();
  await deadlock(second, invoice.id);
  await second.commit();
  assertError(await writing, 503, CONCURRENT_WRITE);
  assert.equal(await stored(), { currency: 'EUR', items: [{ quantity: 1, price: 10 }] });
  // Sent again, it is written.
  const again = await t.http.patch(`/api/invoice/${invoice.id}`).set(admin.auth).send(invoiceChange);
  assert.is(again.status, 200, JSON.stringify(again.body));
  assert.equal(await stored(), { currency: 'USD', items: [{ quantity: 3, price: 30 }] });
});

(usingPostgres() ? test : test.skip)('a child moved while another move of it commits: the parent that move made is the one it leaves', async () => {
  const first = await created(admin, 'invoice', { ...invoiceBody(9101), invoiceItems: [{ quantity: 1, price: 10 }] });
  const [second, third] = [await created(admin, 'invoice', invoiceBody(9102)), await created(admin, 'invoice', invoiceBody(9103))];
  const [item] = await t.db('invoice_item').where({ invoiceId: first.id });
  // Another client moves the item to the second invoice and commits while this move waits for the row.
  const hold = await holdingTransaction();
  await hold('invoice_item').where({ id: item.id }).update({ invoiceId: second.id });
  const secondTag = await etagOf(`/api/invoice/${second.id}`);
  const moving = t.http.patch(`/api/invoice-item/${item.id}`).set(admin.auth).send({ invoiceId: third.id }).then((res) => res);
  await hold.waiters(1);
  await hold.commit();
  const moved = await moving;
  assert.is(moved.status, 200, JSON.stringify(moved.body));
  assert.is(moved.body.invoiceId, third.id);
  assert.is((await t.db('invoice_item').where({ id: item.id }).first()).invoiceId, third.id);
  assert.is.not(await etagOf(`/api/invoice/${second.id}`), secondTag, 'the invoice the item left, as the other move made it, moves');
});

test('ifMatch: required: a change without If-Match is 428 and nothing changes; creates and reads need none', async () => {
  const { id, etag } = await created(admin, 'ledger-entry', { memo: 'opening', cents: 100 });
  const row = () => t.db('ledger_entry').where({ id }).first();
  assertError(await t.http.patch(`/api/ledger-entry/${id}`).set(admin.auth).send({ cents: 5 }), 428, /If-Match/);
  assertError(await t.http.put(`/api/ledger-entry/${id}`).set(admin.auth).send({ memo: 'x' }), 428);
  assertError(await t.http.delete(`/api/ledger-entry/${id}`).set(admin.auth), 428);
  assert.is((await row()).cents, 100);
  const changed = await t.http.patch(`/api/ledger-entry/${id}`).set(admin.auth).set('If-Match', etag).send({ cents: 5 });
  assert.is(changed.status, 200);
  assert.is((await row()).cents, 5);
  assertError(await t.http.delete(`/api/ledger-entry/${id}`).set(admin.auth).set('If-Match', etag), 412);
  assert.is((await t.http.delete(`/api/ledger-entry/${id}`).set(admin.auth).set('If-Match', changed.headers.etag)).status, 204);
  assert.not.ok(await row());
});

test('the document declares the tags, the conditions and their answers', () => {
  const doc = t.openapi as any;
  const byId = doc.paths['/api/tags/{id}'];
  const names = (op: any) => op.parameters.map((p: any) => p.name);
  assert.ok(names(byId.get).includes('If-None-Match'));
  assert.ok(byId.get.responses['304'] && byId.get.responses['200'].headers.ETag);
  for (const method of ['put', 'patch', 'delete']) {
    const ifMatch = byId[method].parameters.find((p: any) => p.name === 'If-Match');
    assert.is(ifMatch.required, false, method);
    assert.ok(byId[method].responses['412'], method);
    assert.not.ok(byId[method].responses['428'], `${method}: tags need no If-Match`);
  }
  const ledger = doc.paths['/api/ledger-entry/{id}'];
  for (const method of ['put', 'patch', 'delete']) {
    assert.is(ledger[method].parameters.find((p: any) => p.name === 'If-Match').required, true, method);
    assert.ok(ledger[method].responses['428'], method);
  }
  assert.ok(doc.paths['/api/tags'].get.responses['304']);
  assert.ok(doc.paths['/api/tags'].post.responses['201'].headers.ETag);
});

test.run();
