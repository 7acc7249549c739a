// Event types: the first hand-written module (resources/event-type/). Everything goes through
// HTTP against a real database, and every write is checked in the database afterwards.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { login, newTenant, userWithRole, type Session } from '../helpers/accounts.js';

type Admin = Session & { organizationId: string };

let t: TestApp;
test.before(async () => {
  t = await createTestApp();
});
test.after(async () => {
  await t.close();
});

const BASE = '/api/event-type';
const UNITS = 'Minute(s), Hour(s), Day(s)';
const MISSING_ID = '00000000-0000-4000-8000-000000000000';

const intro = (extra: Record<string, unknown> = {}) => ({
  title: 'Intro call',
  description: 'Meet the team',
  durationUnit: 'Minute(s)',
  duration: 30,
  ...extra,
});

const rowOf = (id: string) => t.db('event_type').where({ id }).first();
const countRows = async (tenantId: string) => Number((await t.db('event_type').where({ tenantId }).count({ n: '*' }))[0].n);
const linkedTags = async (eventTypeId: string) =>
  (await t.db('tag_event_type').where({ eventTypeId }).select('tagId')).map((r) => r.tagId as string).sort();

async function create(session: Session, body: Record<string, unknown> = intro()) {
  const res = await t.http.post(BASE).set(session.auth).send(body);
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body as Record<string, any>;
}

async function createTag(admin: Session, name: string): Promise<string> {
  const res = await t.http.post('/api/tags').set(admin.auth).send({ name, color: '#ff0000' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

/** An employee record for the admin itself, and a fresh session whose token carries its id. */
async function adminWithEmployee(admin: Admin): Promise<Admin & { employeeId: string }> {
  const emp = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'Olive', lastName: 'Owner', userId: admin.userId });
  assert.is(emp.status, 201, JSON.stringify(emp.body));
  return { ...(await login(t, admin.email)), organizationId: admin.organizationId, employeeId: emp.body.id };
}

function assertError(res: { status: number; body: any }, status: number, message?: string | string[]) {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.is(res.body.statusCode, status);
  assert.type(res.body.error, 'string');
  if (Array.isArray(message)) assert.equal(res.body.message, message);
  else if (message !== undefined) {
    // A 400 lists every broken rule: one of them must carry the expected text.
    if (status === 400) assert.ok(res.body.message.some((m: string) => m.includes(message)), `${JSON.stringify(res.body.message)} lacks "${message}"`);
    else assert.is(res.body.message, message);
  }
}

// ---------------------------------------------------------------------------------------------
// CRUD

test('create: 201 with the record, tenant and organization from the caller, defaults applied', async () => {
  const admin = await newTenant(t);
  const body = await create(admin, { title: 'Intro call', durationUnit: 'Minute(s)', duration: 30 });
  assert.match(body.id, /^[0-9a-f-]{36}$/);
  assert.is(body.title, 'Intro call');
  assert.is(body.description, null);
  assert.is(body.durationUnit, 'Minute(s)');
  assert.is(body.duration, 30);
  assert.is(body.isActive, true);
  assert.is(body.employeeId, null, 'an admin without an employee record leaves employeeId empty');
  assert.is(body.tenantId, admin.tenantId);
  assert.is(body.organizationId, admin.organizationId);
  assert.match(body.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

  const row = await rowOf(body.id);
  assert.is(row.title, 'Intro call');
  assert.is(row.durationUnit, 'Minute(s)');
  assert.is(Number(row.duration), 30);
  assert.is(row.isActive, true);
  assert.is(row.employeeId, null);
  assert.is(row.tenantId, admin.tenantId);
  assert.is(row.organizationId, admin.organizationId);
});

test('create keeps every duration unit and fractional durations exactly as sent', async () => {
  const admin = await newTenant(t);
  for (const [durationUnit, duration] of [['Minute(s)', 15], ['Hour(s)', 1.5], ['Day(s)', 2]] as const) {
    const body = await create(admin, intro({ durationUnit, duration, isActive: false }));
    assert.is(body.durationUnit, durationUnit);
    assert.is(body.duration, duration);
    const row = await rowOf(body.id);
    assert.is(row.durationUnit, durationUnit);
    assert.is(Number(row.duration), duration);
    assert.is(row.isActive, false);
  }
});

test('read one: 200 with the record; an unknown id is 404', async () => {
  const admin = await newTenant(t);
  const created = await create(admin);
  const res = await t.http.get(`${BASE}/${created.id}`).set(admin.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, created);

  assertError(await t.http.get(`${BASE}/${MISSING_ID}`).set(admin.auth), 404, 'The requested record was not found');
});

test('PUT replaces the whole record: absent optional fields are reset, the caller-filled employeeId is kept', async () => {
  const admin = await newTenant(t);
  const withEmployee = await adminWithEmployee(admin);
  const created = await create(withEmployee, intro({ isActive: false }));
  assert.is(created.employeeId, withEmployee.employeeId);

  const res = await t.http.put(`${BASE}/${created.id}`).set(withEmployee.auth).send({ title: 'Workshop', durationUnit: 'Day(s)', duration: 1 });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.id, created.id);
  assert.is(res.body.title, 'Workshop');
  assert.is(res.body.durationUnit, 'Day(s)');
  assert.is(res.body.duration, 1);
  assert.is(res.body.description, null, 'absent description is reset');
  assert.is(res.body.isActive, true, 'absent isActive is reset to its default');
  assert.is(res.body.employeeId, withEmployee.employeeId, 'PUT without employeeId keeps the one create filled in');
  assert.is(res.body.organizationId, admin.organizationId, 'the organization is kept');

  const row = await rowOf(created.id);
  assert.is(row.title, 'Workshop');
  assert.is(row.durationUnit, 'Day(s)');
  assert.is(row.description, null);
  assert.is(row.isActive, true);
  assert.is(row.employeeId, withEmployee.employeeId);
  assert.ok(new Date(row.updatedAt) >= new Date(created.updatedAt));

  // Kept whoever replaces it (an admin without an employee record too); an explicit null clears it.
  const byAdmin = await t.http.put(`${BASE}/${created.id}`).set(admin.auth).send({ title: 'Workshop', durationUnit: 'Day(s)', duration: 2 });
  assert.is(byAdmin.status, 200, JSON.stringify(byAdmin.body));
  assert.is(byAdmin.body.employeeId, withEmployee.employeeId);
  const cleared = await t.http.put(`${BASE}/${created.id}`).set(withEmployee.auth).send({ title: 'Workshop', durationUnit: 'Day(s)', duration: 2, employeeId: null });
  assert.is(cleared.status, 200, JSON.stringify(cleared.body));
  assert.is(cleared.body.employeeId, null);
  assert.is((await rowOf(created.id)).employeeId, null);
  // Once cleared, a PUT leaving it out keeps it cleared: a replace never fills it from the caller.
  const again = await t.http.put(`${BASE}/${created.id}`).set(withEmployee.auth).send({ title: 'Workshop', durationUnit: 'Day(s)', duration: 2 });
  assert.is(again.body.employeeId, null);
});

test('PUT without a required field is 400 and changes nothing', async () => {
  const admin = await newTenant(t);
  const created = await create(admin);
  const res = await t.http.put(`${BASE}/${created.id}`).set(admin.auth).send({ title: 'Workshop', duration: 2 });
  assertError(res, 400, ['durationUnit should not be empty']);
  const row = await rowOf(created.id);
  assert.is(row.title, 'Intro call');
  assert.is(Number(row.duration), 30);
});

test('PATCH changes only the fields sent', async () => {
  const admin = await newTenant(t);
  const withEmployee = await adminWithEmployee(admin);
  const created = await create(withEmployee);
  const res = await t.http.patch(`${BASE}/${created.id}`).set(withEmployee.auth).send({ duration: 45, isActive: false });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.duration, 45);
  assert.is(res.body.isActive, false);
  assert.is(res.body.title, 'Intro call');
  assert.is(res.body.description, 'Meet the team');
  assert.is(res.body.employeeId, withEmployee.employeeId);

  const row = await rowOf(created.id);
  assert.is(Number(row.duration), 45);
  assert.is(row.isActive, false);
  assert.is(row.title, 'Intro call');
  assert.is(row.description, 'Meet the team');
  assert.is(row.employeeId, withEmployee.employeeId);
});

test('DELETE: 204 with no body, the row and its tag links are gone', async () => {
  const admin = await newTenant(t);
  const tagId = await createTag(admin, 'vip');
  const created = await create(admin, intro({ tagIds: [tagId] }));
  assert.equal(await linkedTags(created.id), [tagId]);

  const res = await t.http.delete(`${BASE}/${created.id}`).set(admin.auth);
  assert.is(res.status, 204);
  assert.is(res.text, '');
  assert.is(await rowOf(created.id), undefined);
  assert.equal(await linkedTags(created.id), []);
  assert.ok(await t.db('tag').where({ id: tagId }).first(), 'the tag itself stays');

  assertError(await t.http.get(`${BASE}/${created.id}`).set(admin.auth), 404);
});

// ---------------------------------------------------------------------------------------------
// Lists

test('list: {items, total}, total counts every match, default newest first, take and skip page', async () => {
  const admin = await newTenant(t);
  const ids: string[] = [];
  for (let i = 1; i <= 12; i++) ids.push((await create(admin, intro({ title: `Type ${String(i).padStart(2, '0')}` }))).id);

  const first = await t.http.get(BASE).set(admin.auth);
  assert.is(first.status, 200, JSON.stringify(first.body));
  assert.equal(Object.keys(first.body).sort(), ['items', 'nextCursor', 'total']);
  assert.is(first.body.total, 12);
  assert.is(first.body.items.length, 10, 'take defaults to 10');
  for (const item of first.body.items) {
    for (const key of ['id', 'title', 'description', 'durationUnit', 'duration', 'isActive', 'employeeId', 'tenantId', 'organizationId', 'createdAt', 'updatedAt']) {
      assert.ok(key in item, `list item lacks ${key}`);
    }
  }

  const page = await t.http.get(BASE).query({ 'order[title]': 'ASC', take: 5, skip: 10 }).set(admin.auth);
  assert.is(page.status, 200, JSON.stringify(page.body));
  assert.is(page.body.total, 12);
  assert.equal(page.body.items.map((i: any) => i.title), ['Type 11', 'Type 12']);
});

test('list filters, search and order come from the definition; anything else is a 400', async () => {
  const admin = await newTenant(t);
  await create(admin, intro({ title: 'Quick chat', durationUnit: 'Minute(s)', duration: 15 }));
  await create(admin, intro({ title: 'Workshop', description: 'A long session', durationUnit: 'Hour(s)', duration: 3 }));
  await create(admin, intro({ title: 'Retreat', durationUnit: 'Day(s)', duration: 2, isActive: false }));

  const hours = await t.http.get(BASE).query({ 'where[durationUnit]': 'Hour(s)' }).set(admin.auth);
  assert.is(hours.status, 200, JSON.stringify(hours.body));
  assert.equal(hours.body.items.map((i: any) => i.title), ['Workshop']);

  const inactive = await t.http.get(BASE).query({ 'where[isActive]': 'false' }).set(admin.auth);
  assert.equal(inactive.body.items.map((i: any) => i.title), ['Retreat']);
  assert.is(inactive.body.total, 1);

  const search = await t.http.get(BASE).query({ search: 'LONG' }).set(admin.auth);
  assert.equal(search.body.items.map((i: any) => i.title), ['Workshop'], 'search covers the description, case-insensitively');

  const byDuration = await t.http.get(BASE).query({ 'order[duration]': 'DESC' }).set(admin.auth);
  assert.equal(byDuration.body.items.map((i: any) => i.duration), [15, 3, 2]);

  assertError(await t.http.get(BASE).query({ 'where[durationUnit]': 'Week(s)' }).set(admin.auth), 400, `where.durationUnit must be one of the following values: ${UNITS}`);
  assertError(await t.http.get(BASE).query({ 'where[salary]': '1' }).set(admin.auth), 400, "where: 'salary' is not filterable");
  assertError(await t.http.get(BASE).query({ 'order[description]': 'ASC' }).set(admin.auth), 400, "order: 'description' is not sortable");
  assertError(await t.http.get(BASE).query({ take: '-1' }).set(admin.auth), 400, 'take must not be less than 1');
  assertError(await t.http.get(BASE).query({ startDate: '2026-01-01' }).set(admin.auth), 400, 'startDate is not a supported list parameter of event-type');
});

test('list filters by employee and by tag', async () => {
  const admin = await newTenant(t);
  const withEmployee = await adminWithEmployee(admin);
  const tagId = await createTag(admin, 'onboarding');
  const mine = await create(withEmployee, intro({ title: 'Mine', tagIds: [tagId] }));
  await create(withEmployee, intro({ title: 'Nobody', employeeId: null }));

  const byEmployee = await t.http.get(BASE).query({ 'where[employeeId]': withEmployee.employeeId }).set(admin.auth);
  assert.equal(byEmployee.body.items.map((i: any) => i.id), [mine.id]);
  const nested = await t.http.get(BASE).query({ 'where[employee][id]': withEmployee.employeeId }).set(admin.auth);
  assert.equal(nested.body.items.map((i: any) => i.id), [mine.id]);
  const byTag = await t.http.get(BASE).query({ 'tags[]': tagId }).set(admin.auth);
  assert.equal(byTag.body.items.map((i: any) => i.id), [mine.id]);
  assertError(await t.http.get(BASE).query({ 'where[employeeId]': 'nope' }).set(admin.auth), 400, 'where.employeeId must be a UUID');
});

test('POST /search takes the same parameters in the body, plain or wrapped in findInput', async () => {
  const admin = await newTenant(t);
  await create(admin, intro({ title: 'Alpha', durationUnit: 'Hour(s)', duration: 1 }));
  await create(admin, intro({ title: 'Beta', durationUnit: 'Hour(s)', duration: 2 }));
  await create(admin, intro({ title: 'Gamma' }));

  const plain = await t.http.post(`${BASE}/search`).set(admin.auth).send({ where: { durationUnit: 'Hour(s)' }, order: { title: 'DESC' }, take: 1 });
  assert.is(plain.status, 200, JSON.stringify(plain.body));
  assert.is(plain.body.total, 2);
  assert.equal(plain.body.items.map((i: any) => i.title), ['Beta']);

  const wrapped = await t.http.post(`${BASE}/search`).set(admin.auth).send({ findInput: { where: { title: 'Gamma' }, relations: ['employee'] } });
  assert.is(wrapped.status, 200, JSON.stringify(wrapped.body));
  assert.equal(wrapped.body.items.map((i: any) => i.title), ['Gamma']);
  assert.is(wrapped.body.items[0].employee, null);

  assertError(await t.http.post(`${BASE}/search`).set(admin.auth).send({ where: { duration: 1 } }), 400, "where: 'duration' is not filterable");
  assertError(await t.http.post(`${BASE}/search`).set(admin.auth).send([1]), 400, 'body must be an object');
});

// ---------------------------------------------------------------------------------------------
// Validation

test('create validation: every broken rule is named and nothing is written', async () => {
  const admin = await newTenant(t);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ durationUnit: 'Minute(s)', duration: 30 }, 'title should not be empty'],
    [intro({ title: '' }), 'title should not be empty'],
    [intro({ title: 42 }), 'title must be a string'],
    [intro({ title: 'x'.repeat(256) }), 'title must be shorter than or equal to 255 characters'],
    [intro({ durationUnit: 'Week(s)' }), `durationUnit must be one of the following values: ${UNITS}`],
    [intro({ durationUnit: 'minute(s)' }), `durationUnit must be one of the following values: ${UNITS}`],
    [intro({ durationUnit: undefined }), 'durationUnit should not be empty'],
    [intro({ duration: 0 }), 'duration must be greater than 0'],
    [intro({ duration: -5 }), 'duration must be greater than 0'],
    [intro({ duration: '30' }), 'duration must be a number conforming to the specified constraints'],
    [intro({ duration: undefined }), 'duration should not be empty'],
    [intro({ isActive: 'yes' }), 'isActive must be a boolean value'],
    [intro({ isActive: null }), 'isActive must be a boolean value'],
    [intro({ employeeId: 'not-a-uuid' }), 'employeeId must be a UUID'],
    [intro({ foo: 'bar' }), 'property foo should not exist'],
  ];
  for (const [body, message] of cases) {
    const res = await t.http.post(BASE).set(admin.auth).send(body);
    assertError(res, 400, message);
    assert.ok(Array.isArray(res.body.message), 'a 400 message is an array');
  }
  const all = await t.http.post(BASE).set(admin.auth).send({ durationUnit: 'Week(s)', duration: 0, foo: 1 });
  assertError(all, 400);
  assert.equal(
    [...all.body.message].sort(),
    ['property foo should not exist', 'title should not be empty', `durationUnit must be one of the following values: ${UNITS}`, 'duration must be greater than 0'].sort(),
  );
  assert.is(await countRows(admin.tenantId), 0);
});

test('PATCH validation: 400 and the row is unchanged', async () => {
  const admin = await newTenant(t);
  const created = await create(admin);
  for (const [body, message] of [
    [{ duration: 0 }, 'duration must be greater than 0'],
    [{ durationUnit: 'Week(s)' }, `durationUnit must be one of the following values: ${UNITS}`],
    [{ title: null }, 'title must be a string'],
    [{ foo: 1 }, 'property foo should not exist'],
  ] as const) {
    assertError(await t.http.patch(`${BASE}/${created.id}`).set(admin.auth).send(body), 400, message);
  }
  const row = await rowOf(created.id);
  assert.is(Number(row.duration), 30);
  assert.is(row.durationUnit, 'Minute(s)');
  assert.is(row.title, 'Intro call');
});

test('read-only fields are ignored; another tenantId in the body is 403', async () => {
  const admin = await newTenant(t);
  const other = await newTenant(t, 'Other');
  const body = await create(admin, intro({ id: MISSING_ID, tenantId: admin.tenantId, createdAt: '2000-01-01T00:00:00Z' }));
  assert.is.not(body.id, MISSING_ID);
  assert.is.not(body.createdAt, '2000-01-01T00:00:00.000Z');
  assert.is(await rowOf(MISSING_ID), undefined);

  assertError(await t.http.post(BASE).set(admin.auth).send(intro({ tenantId: other.tenantId })), 403, 'Forbidden resource');
  assert.is(await countRows(admin.tenantId), 1);
  assert.is(await countRows(other.tenantId), 0);
});

test('a body that is not a JSON object is a 400; not JSON at all is 415', async () => {
  const admin = await newTenant(t);
  assertError(await t.http.post(BASE).set(admin.auth).send([intro()]), 400, 'body must be an object');
  assertError(await t.http.post(BASE).set(admin.auth).set('Content-Type', 'application/json').send('{"title":'), 400);
  assertError(await t.http.post(BASE).set(admin.auth).set('Content-Type', 'text/plain').send('title=x'), 415);
  assert.is(await countRows(admin.tenantId), 0);
});

test('an invalid uuid in the path is 400 "id must be a UUID" on every route', async () => {
  const admin = await newTenant(t);
  await create(admin);
  const bad = `${BASE}/not-a-uuid`;
  assertError(await t.http.get(bad).set(admin.auth), 400, ['id must be a UUID']);
  assertError(await t.http.put(bad).set(admin.auth).send(intro()), 400, ['id must be a UUID']);
  assertError(await t.http.patch(bad).set(admin.auth).send({ duration: 1 }), 400, ['id must be a UUID']);
  assertError(await t.http.delete(bad).set(admin.auth), 400, ['id must be a UUID']);
  assertError(await t.http.get(`${BASE}/1' or '1'='1`).set(admin.auth), 400, ['id must be a UUID']);
  assert.is(await countRows(admin.tenantId), 1);
});

// ---------------------------------------------------------------------------------------------
// employeeId: the hand-written default

test("create without employeeId takes the caller's own employee; an explicit value is kept", async () => {
  const admin = await newTenant(t);
  const withEmployee = await adminWithEmployee(admin);
  const colleague = await userWithRole(t, admin, 'MANAGER', true);

  const defaulted = await create(withEmployee);
  assert.is(defaulted.employeeId, withEmployee.employeeId);
  assert.is((await rowOf(defaulted.id)).employeeId, withEmployee.employeeId);

  const explicit = await create(withEmployee, intro({ employeeId: colleague.employeeId }));
  assert.is(explicit.employeeId, colleague.employeeId);
  assert.is((await rowOf(explicit.id)).employeeId, colleague.employeeId);

  const none = await create(withEmployee, intro({ employeeId: null }));
  assert.is(none.employeeId, null, 'an explicit null is the client choosing no employee');
  assert.is((await rowOf(none.id)).employeeId, null);

  // The old token (issued before the employee existed) carries no employee: nothing to default.
  const stale = await create(admin);
  assert.is(stale.employeeId, null);
});

test('employeeId must name an employee of the caller\'s tenant', async () => {
  const admin = await newTenant(t);
  const other = await newTenant(t, 'Other');
  const foreign = await adminWithEmployee(other);

  const res = await t.http.post(BASE).set(admin.auth).send(intro({ employeeId: foreign.employeeId }));
  assertError(res, 400, ['employeeId must reference an existing employee']);
  assertError(await t.http.post(BASE).set(admin.auth).send(intro({ employeeId: MISSING_ID })), 400, ['employeeId must reference an existing employee']);
  assert.is(await countRows(admin.tenantId), 0);

  const created = await create(admin);
  assertError(await t.http.patch(`${BASE}/${created.id}`).set(admin.auth).send({ employeeId: foreign.employeeId }), 400, ['employeeId must reference an existing employee']);
  assertError(await t.http.put(`${BASE}/${created.id}`).set(admin.auth).send(intro({ employeeId: foreign.employeeId })), 400, ['employeeId must reference an existing employee']);
  assert.is((await rowOf(created.id)).employeeId, null);
});

// ---------------------------------------------------------------------------------------------
// Relations

test('relations[]=employee and tags load the related records; others are refused by the whitelist', async () => {
  const admin = await newTenant(t);
  const withEmployee = await adminWithEmployee(admin);
  const tagId = await createTag(admin, 'demo');
  const created = await create(withEmployee, intro({ tags: [{ id: tagId }] }));

  const one = await t.http.get(`${BASE}/${created.id}`).query('relations[]=employee&relations[]=tags').set(admin.auth);
  assert.is(one.status, 200, JSON.stringify(one.body));
  assert.is(one.body.employee.id, withEmployee.employeeId);
  assert.is(one.body.employee.firstName, 'Olive');
  assert.equal(one.body.tags.map((tag: any) => tag.id), [tagId]);

  const deep = await t.http.get(`${BASE}/${created.id}`).query('relations[]=employee.user').set(admin.auth);
  assert.is(deep.status, 200, JSON.stringify(deep.body));
  assert.is(deep.body.employee.user.id, admin.userId);
  assert.not.ok('hash' in deep.body.employee.user, 'hidden fields never leave');

  const list = await t.http.get(BASE).query('relations=employee,tags').set(admin.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  assert.is(list.body.items[0].employee.id, withEmployee.employeeId);
  assert.is(list.body.items[0].tags.length, 1);

  // The list of allowed names after "allowed:" is checked in the known-bugs section below.
  assertError(await t.http.get(`${BASE}/${created.id}`).query('relations[]=salary').set(admin.auth), 400, "relations: 'salary' is not allowed");
  assertError(await t.http.get(BASE).query('relations[]=organization').set(admin.auth), 400, "relations: 'organization' is not allowed");
  assertError(await t.http.get(`${BASE}/${created.id}`).query('relations[]=employee.salary').set(admin.auth), 400, "relations: 'employee.salary' is not allowed; allowed after 'employee':");
  assertError(await t.http.get(`${BASE}/${created.id}`).query('relations[]=employee.user.role.x').set(admin.auth), 400, "relations: 'employee.user.role.x' is deeper than 3 levels");
  assertError(await t.http.get(`${BASE}/${created.id}`).query('take=5').set(admin.auth), 400, 'take is not a supported parameter when reading one record; supported: relations, select');
});

test('tags are writable as tags: [{id}] and as tagIds; PUT without them clears, PATCH without them keeps', async () => {
  const admin = await newTenant(t);
  const [a, b, c] = [await createTag(admin, 'a'), await createTag(admin, 'b'), await createTag(admin, 'c')];

  const created = await create(admin, intro({ tags: [{ id: a }], tagIds: [b, a] }));
  assert.equal(await linkedTags(created.id), [a, b].sort());

  const patched = await t.http.patch(`${BASE}/${created.id}`).set(admin.auth).send({ tagIds: [c] });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(await linkedTags(created.id), [c]);

  const untouched = await t.http.patch(`${BASE}/${created.id}`).set(admin.auth).send({ title: 'Renamed' });
  assert.is(untouched.status, 200);
  assert.equal(await linkedTags(created.id), [c], 'PATCH leaves relations it was not sent alone');

  const replaced = await t.http.put(`${BASE}/${created.id}`).set(admin.auth).send(intro());
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.equal(await linkedTags(created.id), [], 'PUT without tags clears them');
});

test("tags of another tenant or malformed tag ids are a 400 and link nothing", async () => {
  const admin = await newTenant(t);
  const other = await newTenant(t, 'Other');
  const foreignTag = await createTag(other, 'theirs');
  const mine = await createTag(admin, 'mine');

  assertError(await t.http.post(BASE).set(admin.auth).send(intro({ tagIds: [mine, foreignTag] })), 400, ['tags must reference an existing tag']);
  assertError(await t.http.post(BASE).set(admin.auth).send(intro({ tags: [{ id: 'x' }] })), 400, 'tags.0.id must be a UUID');
  assertError(await t.http.post(BASE).set(admin.auth).send(intro({ tagIds: 'abc' })), 400, 'tagIds must be an array');
  assert.is(await countRows(admin.tenantId), 0);
  assert.is(Number((await t.db('tag_event_type').count({ n: '*' }).whereIn('tagId', [mine, foreignTag]))[0].n), 0);

  const created = await create(admin, intro({ tagIds: [mine] }));
  assertError(await t.http.patch(`${BASE}/${created.id}`).set(admin.auth).send({ tags: [{ id: foreignTag }] }), 400, ['tags must reference an existing tag']);
  assert.equal(await linkedTags(created.id), [mine]);
});

// ---------------------------------------------------------------------------------------------
// Tenancy and roles

test('another tenant: every route by id is 404, its list and search do not show the record, the row is unchanged', async () => {
  const admin = await newTenant(t);
  const other = await newTenant(t, 'Other');
  const created = await create(admin);
  const before = await rowOf(created.id);
  const url = `${BASE}/${created.id}`;

  assertError(await t.http.get(url).set(other.auth), 404, 'The requested record was not found');
  assertError(await t.http.put(url).set(other.auth).send(intro({ title: 'Hijacked' })), 404, 'The requested record was not found');
  assertError(await t.http.patch(url).set(other.auth).send({ title: 'Hijacked' }), 404, 'The requested record was not found');
  await t.http.delete(url).set(other.auth); // its status is checked in the known-bugs section below
  assert.equal(await rowOf(created.id), before);

  await create(other, intro({ title: 'Theirs' }));
  const list = await t.http.get(BASE).set(other.auth);
  assert.is(list.status, 200);
  assert.is(list.body.total, 1);
  assert.equal(list.body.items.map((i: any) => i.title), ['Theirs']);
  const byId = await t.http.get(BASE).query({ 'where[id]': created.id }).set(other.auth);
  assert.equal(byId.body, { items: [], total: 0 });
  const search = await t.http.post(`${BASE}/search`).set(other.auth).send({ where: { id: created.id } });
  assert.equal(search.body, { items: [], total: 0 });
  assertError(await t.http.get(BASE).query({ 'where[tenantId]': admin.tenantId }).set(other.auth), 403, 'Forbidden resource');
  assertError(await t.http.get(BASE).set(other.auth).set('Tenant-Id', admin.tenantId), 403, 'Forbidden resource');

  const mine = await t.http.get(BASE).set(admin.auth);
  assert.equal(mine.body.items.map((i: any) => i.id), [created.id]);
});

test("EMPLOYEE lists and reads the tenant's event types but cannot write", async () => {
  const admin = await newTenant(t);
  const employee = await userWithRole(t, admin, 'EMPLOYEE', true);
  const created = await create(admin);
  const before = await rowOf(created.id);

  const list = await t.http.get(BASE).set(employee.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  assert.equal(list.body.items.map((i: any) => i.id), [created.id], 'not limited to its own employee');
  const one = await t.http.get(`${BASE}/${created.id}`).set(employee.auth);
  assert.is(one.status, 200);
  const search = await t.http.post(`${BASE}/search`).set(employee.auth).send({});
  assert.is(search.body.total, 1);

  assertError(await t.http.post(BASE).set(employee.auth).send(intro()), 403, 'Forbidden resource');
  assertError(await t.http.put(`${BASE}/${created.id}`).set(employee.auth).send(intro({ title: 'Mine now' })), 403, 'Forbidden resource');
  assertError(await t.http.patch(`${BASE}/${created.id}`).set(employee.auth).send({ title: 'Mine now' }), 403, 'Forbidden resource');
  assertError(await t.http.delete(`${BASE}/${created.id}`).set(employee.auth), 403, 'Forbidden resource');
  assert.equal(await rowOf(created.id), before);
  assert.is(await countRows(admin.tenantId), 1);
});

test('VIEWER is read-only; CANDIDATE sees nothing; no token is 401', async () => {
  const admin = await newTenant(t);
  const viewer = await userWithRole(t, admin, 'VIEWER');
  const candidate = await userWithRole(t, admin, 'CANDIDATE');
  const created = await create(admin);
  const before = await rowOf(created.id);

  assert.is((await t.http.get(BASE).set(viewer.auth)).body.total, 1);
  assert.is((await t.http.get(`${BASE}/${created.id}`).set(viewer.auth)).status, 200);
  assertError(await t.http.post(BASE).set(viewer.auth).send(intro()), 403, 'Forbidden resource');
  assertError(await t.http.put(`${BASE}/${created.id}`).set(viewer.auth).send(intro()), 403, 'Forbidden resource');
  assertError(await t.http.patch(`${BASE}/${created.id}`).set(viewer.auth).send({ duration: 1 }), 403, 'Forbidden resource');
  assertError(await t.http.delete(`${BASE}/${created.id}`).set(viewer.auth), 403, 'Forbidden resource');

  assertError(await t.http.get(BASE).set(candidate.auth), 403, 'Forbidden resource');
  assertError(await t.http.get(`${BASE}/${created.id}`).set(candidate.auth), 403, 'Forbidden resource');

  const anonymous = await t.http.get(BASE);
  assertError(anonymous, 401, 'Unauthorized');
  assert.is(anonymous.headers['www-authenticate'], 'Bearer');
  assertError(await t.http.post(BASE).send(intro()), 401, 'Unauthorized');
  assertError(await t.http.delete(`${BASE}/${created.id}`), 401, 'Unauthorized');

  assert.equal(await rowOf(created.id), before);
  assert.is(await countRows(admin.tenantId), 1);
});

// ---------------------------------------------------------------------------------------------
// Answers that once went wrong in the engine: a DELETE on PGlite (whose driver reports no row
// count) and the list of allowed relations in a refusal.

test('DELETE of a missing id, or of another tenant\'s record, is 404', async () => {
  const admin = await newTenant(t);
  const other = await newTenant(t, 'Other');
  const created = await create(admin);
  assertError(await t.http.delete(`${BASE}/${created.id}`).set(other.auth), 404, 'The requested record was not found');
  assert.ok(await rowOf(created.id));
  assert.is((await t.http.delete(`${BASE}/${created.id}`).set(admin.auth)).status, 204);
  assertError(await t.http.delete(`${BASE}/${created.id}`).set(admin.auth), 404, 'The requested record was not found');
  assertError(await t.http.delete(`${BASE}/${MISSING_ID}`).set(admin.auth), 404, 'The requested record was not found');
});

test('a refused relation names the allowed ones', async () => {
  const admin = await newTenant(t);
  const created = await create(admin);
  assertError(await t.http.get(`${BASE}/${created.id}`).query('relations[]=salary').set(admin.auth), 400, ["relations: 'salary' is not allowed; allowed: employee, tags"]);
  assertError(await t.http.get(BASE).query('relations[]=organization').set(admin.auth), 400, ["relations: 'organization' is not allowed; allowed: employee, tags"]);
});

// ---------------------------------------------------------------------------------------------
// OpenAPI

test('the OpenAPI document describes every event type route', async () => {
  const res = await t.http.get('/swg-json');
  assert.is(res.status, 200);
  const paths = res.body.paths as Record<string, Record<string, any>>;
  assert.ok(paths[BASE], `${BASE} missing from ${Object.keys(paths).join(', ')}`);
  assert.equal(Object.keys(paths[BASE]).filter((k) => k !== 'parameters').sort(), ['get', 'post']);
  assert.equal(Object.keys(paths[`${BASE}/{id}`]).filter((k) => k !== 'parameters').sort(), ['delete', 'get', 'patch', 'put']);
  assert.equal(Object.keys(paths[`${BASE}/search`]).filter((k) => k !== 'parameters'), ['post']);
  const item = paths[`${BASE}/{id}`];
  assert.equal(
    [paths[BASE].get, paths[BASE].post, paths[`${BASE}/search`].post, item.get, item.put, item.patch, item.delete].map((op) => op.operationId),
    ['listEventType', 'createEventType', 'searchEventType', 'getEventType', 'replaceEventType', 'updateEventType', 'deleteEventType'],
  );
  assert.equal(paths[BASE].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/EventTypeCreate' });
  assert.equal(paths[BASE].post.responses['201'].content['application/json'].schema, { $ref: '#/components/schemas/EventType' });
  assert.equal(paths[BASE].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/EventTypeList' });
  assert.ok(item.delete.responses['204']);
  assert.ok(item.get.responses['404']);
  const relations = item.get.parameters.find((p: any) => p.name === 'relations[]');
  assert.ok(relations.schema.items.enum.includes('employee') && relations.schema.items.enum.includes('tags'));
  const schemas = res.body.components.schemas;
  assert.equal(schemas.EventTypeCreate.properties.durationUnit.enum, ['Minute(s)', 'Hour(s)', 'Day(s)']);
  assert.equal(schemas.EventTypeCreate.required, ['title', 'durationUnit', 'duration']);
});

test.run();
