// The definition format's rules between fields, computed fields and caller defaults, proven end
// to end on a fixture resource, test/fixtures/rules/stint.yaml:
// - `rules:` — field >= atLeast when both are set, on create, PUT and a PATCH of one side alone;
//   a violation is a 400 with the rule's message and writes nothing;
// - `computed: {secondsBetween}` — whole seconds between two timestamps, kept by the database,
//   never written by a client, null while either side is;
// - `callerDefault` — the caller's user id (readOnly: always) or employee id (when absent);
// - misuses of the three stop start-up with the file, line, column and path of the mistake.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES_DIR } from '../../app/paths.js';
import { DefinitionError } from '../../engine/resource/load.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';

const RULES_DIR = fileURLToPath(new URL('../fixtures/rules/', import.meta.url));
const BAD_DIR = path.join(RULES_DIR, 'bad');

type Worker = Session & { employeeId?: string };

let t: TestApp;
let admin: Session & { organizationId: string };
let ann: Worker;
let bob: Worker;
let stranger: Worker;

const row = (id: string) => t.db('stint').where({ id }).first();
const count = async () => Number((await t.db('stint').count({ n: '*' }))[0].n);
const create = (who: Session, body: object) => t.http.post('/api/stint').set(who.auth).send(body);

test.before(async () => {
  t = await createTestApp({ resourceDirs: [RESOURCES_DIR, RULES_DIR], migrationDirs: [path.join(RULES_DIR, 'migrations')] });
  admin = await newTenant(t);
  ann = await userWithRole(t, admin, 'EMPLOYEE', true);
  bob = await userWithRole(t, admin, 'EMPLOYEE', true);
  const other = await newTenant(t, 'Elsewhere');
  stranger = await userWithRole(t, other, 'EMPLOYEE', true);
});
test.after(async () => {
  await t?.close();
});

// ---------------------------------------------------------------------------------------------
// rules:

test('rules: a create that breaks a rule is a 400 with the default message, and writes nothing', async () => {
  const before = await count();
  assertError(
    await create(ann, { startedAt: '2026-03-02T10:00:00Z', stoppedAt: '2026-03-02T09:59:59Z' }),
    400,
    'stoppedAt must not be earlier than startedAt',
  );
  assertError(await create(ann, { low: 5, high: 4 }), 400, 'high must not be less than low');
  assert.is(await count(), before);
});

test("rules: a rule's own message replaces the default one", async () => {
  const before = await count();
  const res = await create(ann, { fromDay: '2026-03-05', toDay: '2026-03-04' });
  assertError(res, 400, 'A stint ends on or after the day it starts');
  assert.equal(res.body.message, ['A stint ends on or after the day it starts']);
  assert.is(await count(), before);
});

test('rules: equal values pass (at least, not later than), and so do null sides', async () => {
  const equal = await create(ann, { startedAt: '2026-03-02T10:00:00Z', stoppedAt: '2026-03-02T10:00:00Z', fromDay: '2026-03-02', toDay: '2026-03-02', low: 3, high: 3 });
  assert.is(equal.status, 201, JSON.stringify(equal.body));
  assert.is(equal.body.seconds, 0);
  const open = await create(ann, { startedAt: '2026-03-02T10:00:00Z', fromDay: '2026-03-09', high: -100 });
  assert.is(open.status, 201, JSON.stringify(open.body));
  assert.is(open.body.stoppedAt, null);
  assert.is(open.body.toDay, null);
  const onlyEnd = await create(ann, { stoppedAt: '2000-01-01T00:00:00Z', toDay: '2000-01-01', low: 100 });
  assert.is(onlyEnd.status, 201, JSON.stringify(onlyEnd.body));
  // A side set back to null lifts the rule: the other may then move anywhere.
  const cleared = await t.http.patch(`/api/stint/${equal.body.id}`).set(ann.auth).send({ startedAt: null });
  assert.is(cleared.status, 200, JSON.stringify(cleared.body));
  const moved = await t.http.patch(`/api/stint/${equal.body.id}`).set(ann.auth).send({ stoppedAt: '1999-01-01T00:00:00Z' });
  assert.is(moved.status, 200, JSON.stringify(moved.body));
  assert.is((await row(equal.body.id)).stoppedAt.toISOString(), '1999-01-01T00:00:00.000Z');
});

test('rules: a PATCH of one side alone that breaks the rule is a 400, and the record stays as it was', async () => {
  const made = await create(ann, { label: 'kept', startedAt: '2026-03-02T10:00:00Z', stoppedAt: '2026-03-02T11:00:00Z', fromDay: '2026-03-02', toDay: '2026-03-03', low: 1, high: 2 });
  assert.is(made.status, 201, JSON.stringify(made.body));
  const id = made.body.id;
  const before = await row(id);
  const patch = (body: object) => t.http.patch(`/api/stint/${id}`).set(ann.auth).send(body);
  assertError(await patch({ stoppedAt: '2026-03-02T09:00:00Z' }), 400, 'stoppedAt must not be earlier than startedAt');
  assertError(await patch({ startedAt: '2026-03-02T11:00:01Z' }), 400, 'stoppedAt must not be earlier than startedAt');
  assertError(await patch({ label: 'changed', toDay: '2026-03-01' }), 400, 'A stint ends on or after the day it starts');
  assertError(await patch({ low: 3 }), 400, 'high must not be less than low');
  // A full replace is checked the same way.
  assertError(
    await t.http.put(`/api/stint/${id}`).set(ann.auth).send({ label: 'changed', startedAt: '2026-03-02T10:00:00Z', stoppedAt: '2026-03-01T10:00:00Z' }),
    400,
    'stoppedAt must not be earlier than startedAt',
  );
  assert.equal(await row(id), before, 'label and updatedAt included');
  // The same PATCH within the rule goes through.
  const fine = await patch({ stoppedAt: '2026-03-02T10:30:00Z' });
  assert.is(fine.status, 200, JSON.stringify(fine.body));
  assert.is(fine.body.stoppedAt, '2026-03-02T10:30:00.000Z');
});

// ---------------------------------------------------------------------------------------------
// computed: {secondsBetween}

test('computed: returned on create, in whole seconds rounded down, and on read and list', async () => {
  const res = await create(ann, { startedAt: '2026-03-02T08:00:00Z', stoppedAt: '2026-03-02T09:30:01.900Z' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.seconds, 5401);
  assert.is((await row(res.body.id)).seconds, 5401);
  const read = await t.http.get(`/api/stint/${res.body.id}`).set(ann.auth);
  assert.is(read.body.seconds, 5401);
  // Sortable like any column: the list orders by the database's value.
  const list = await t.http.get('/api/stint?order[seconds]=ASC&take=100').set(ann.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  const seconds = list.body.items.map((s: { seconds: number | null }) => s.seconds).filter((s: number | null) => s !== null);
  assert.ok(seconds.includes(5401));
  assert.equal(seconds, [...seconds].sort((a: number, b: number) => a - b));
});

test('computed: recomputed after a PATCH of either side, and after a PUT', async () => {
  const { body } = await create(ann, { startedAt: '2026-03-02T08:00:00Z', stoppedAt: '2026-03-02T08:01:00Z' });
  assert.is(body.seconds, 60);
  const later = await t.http.patch(`/api/stint/${body.id}`).set(ann.auth).send({ stoppedAt: '2026-03-02T10:00:00Z' });
  assert.is(later.status, 200, JSON.stringify(later.body));
  assert.is(later.body.seconds, 7200);
  const earlier = await t.http.patch(`/api/stint/${body.id}`).set(ann.auth).send({ startedAt: '2026-03-02T07:00:00Z' });
  assert.is(earlier.body.seconds, 10800);
  assert.is((await row(body.id)).seconds, 10800);
  const replaced = await t.http.put(`/api/stint/${body.id}`).set(ann.auth).send({ startedAt: '2026-03-02T07:00:00Z', stoppedAt: '2026-03-02T07:00:42Z' });
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.is(replaced.body.seconds, 42);
});

test("computed: a client's value is ignored on create, PUT and PATCH", async () => {
  const res = await create(ann, { startedAt: '2026-03-02T08:00:00Z', stoppedAt: '2026-03-02T08:00:30Z', seconds: 999 });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.seconds, 30);
  const patched = await t.http.patch(`/api/stint/${res.body.id}`).set(ann.auth).send({ seconds: 5, label: 'patched' });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.is(patched.body.seconds, 30);
  assert.is(patched.body.label, 'patched');
  const put = await t.http.put(`/api/stint/${res.body.id}`).set(ann.auth).send({ startedAt: '2026-03-02T08:00:00Z', stoppedAt: '2026-03-02T08:00:10Z', seconds: 1 });
  assert.is(put.body.seconds, 10);
  assert.is((await row(res.body.id)).seconds, 10);
});

test('computed: null while either side is null, a number again once both are set', async () => {
  const none = await create(ann, {});
  assert.is(none.status, 201, JSON.stringify(none.body));
  assert.is(none.body.seconds, null);
  const started = await t.http.patch(`/api/stint/${none.body.id}`).set(ann.auth).send({ startedAt: '2026-03-02T08:00:00Z' });
  assert.is(started.body.seconds, null);
  const stopped = await t.http.patch(`/api/stint/${none.body.id}`).set(ann.auth).send({ stoppedAt: '2026-03-02T08:00:05Z' });
  assert.is(stopped.body.seconds, 5);
  const cleared = await t.http.patch(`/api/stint/${none.body.id}`).set(ann.auth).send({ startedAt: null });
  assert.is(cleared.body.seconds, null);
  assert.is((await row(none.body.id)).seconds, null);
});

// ---------------------------------------------------------------------------------------------
// callerDefault

test("callerDefault userId with readOnly: always the caller's user, whatever the body says", async () => {
  const res = await create(ann, { label: 'mine', creatorId: bob.userId });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.creatorId, ann.userId);
  assert.is((await row(res.body.id)).creatorId, ann.userId);
  const byAdmin = await create(admin, { label: 'admin' });
  assert.is(byAdmin.body.creatorId, admin.userId);
  // Another caller's write never makes it theirs.
  const patched = await t.http.patch(`/api/stint/${res.body.id}`).set(bob.auth).send({ creatorId: bob.userId, label: 'bob was here' });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  const put = await t.http.put(`/api/stint/${res.body.id}`).set(bob.auth).send({ creatorId: bob.userId, label: 'bob again' });
  assert.is(put.status, 200, JSON.stringify(put.body));
  assert.is(put.body.creatorId, ann.userId);
  assert.is((await row(res.body.id)).creatorId, ann.userId);
});

test("callerDefault employeeId: the caller's employee when absent, a given id of the tenant kept", async () => {
  const absent = await create(ann, { label: 'absent' });
  assert.is(absent.status, 201, JSON.stringify(absent.body));
  assert.is(absent.body.employeeId, ann.employeeId);
  // An EMPLOYEE names only an employee it can see (itself); an admin names any of the tenant's.
  assertError(await create(ann, { label: 'for bob', employeeId: bob.employeeId }), 400, 'employeeId must reference an existing employee');
  const given = await create(admin, { label: 'given', employeeId: bob.employeeId });
  assert.is(given.status, 201, JSON.stringify(given.body));
  assert.is(given.body.employeeId, bob.employeeId);
  assert.is((await row(given.body.id)).employeeId, bob.employeeId);
  // A caller without an employee record leaves it empty.
  const byAdmin = await create(admin, { label: 'no employee' });
  assert.is(byAdmin.status, 201, JSON.stringify(byAdmin.body));
  assert.is(byAdmin.body.employeeId, null);
  // Only on create: a PATCH that leaves it out keeps the stored value.
  const patched = await t.http.patch(`/api/stint/${given.body.id}`).set(admin.auth).send({ label: 'still bob' });
  assert.is(patched.body.employeeId, bob.employeeId);
});

test('callerDefault employeeId: a given id must be an employee of the caller\'s tenant', async () => {
  const before = await count();
  assertError(await create(ann, { employeeId: stranger.employeeId }), 400, 'employeeId must reference an existing employee');
  assertError(await create(ann, { employeeId: 'not-a-uuid' }), 400);
  assert.is(await count(), before);
});

// ---------------------------------------------------------------------------------------------
// Misuses stop start-up, each at its place in the file.

test('bad definition: rules, computed and callerDefault misused refuse start-up with located messages', async () => {
  const file = path.relative(process.cwd(), path.join(BAD_DIR, 'broken-stint.yaml'));
  try {
    const app = await createTestApp({ resourceDirs: [RESOURCES_DIR, BAD_DIR] });
    await app.close();
    assert.unreachable('the app was built');
  } catch (err) {
    assert.instance(err, DefinitionError);
    assert.equal((err as DefinitionError).problems.sort(), [
      `${file}:12:36 fields.hours.computed: secondsBetween gives whole seconds: the field must be an integer`,
      `${file}:13:55 fields.span.computed.secondsBetween.0: "onDay" must be a timestamp field`,
      `${file}:13:62 fields.span.computed.secondsBetween.1: secondsBetween field "finishedAt" is not a field of broken-stint`,
      `${file}:14:45 fields.ownerName.callerDefault: only a uuid field can take the caller's id`,
      `${file}:16:34 rules.0.atLeast: rule field "beganAt" is not a field of broken-stint`,
      `${file}:17:14 rules.1.field: rule field "endedAt" is not a field of broken-stint`,
      `${file}:18:5 rules.2: "count" and "onDay" must both be dates/timestamps or both numbers`,
      `${file}:19:5 rules.3: "label" and "label" must both be dates/timestamps or both numbers`,
    ].sort());
  }
});

test.run();
