// tags[] on every resource that has a tags relation, time logs included: the
// parameter follows from the relation (a definition's tagFilter may name another), is declared
// in the document, and filters within the caller's tenant.
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';

let t: TestApp;
type Tenant = Session & { organizationId: string };
let acme: Tenant;
let other: Tenant;
let employeeId: string;
let urgent: string;
let billable: string;

const tag = async (tenant: Tenant, name: string) => {
  const res = await t.http.post('/api/tags').set(tenant.auth).send({ name, color: 'red' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.id as string;
};

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  const employee = await t.http.post('/api/employee').set(acme.auth).send({ firstName: 'Ada', lastName: 'Log', userId: acme.userId });
  assert.is(employee.status, 201, JSON.stringify(employee.body));
  employeeId = employee.body.id;
  urgent = await tag(acme, 'Urgent');
  billable = await tag(acme, 'Billable');
});
test.after(async () => {
  await t?.close();
});

test('every resource with a tags relation takes tags[], and the document declares it there', () => {
  const doc = t.openapi as Record<string, any>;
  const withTags = [...t.engine.registry.values()].filter((r) => r.relations.get('tags')?.kind === 'manyToMany');
  assert.ok(withTags.some((r) => r.name === 'time-log'), 'time logs have tags');
  assert.ok(withTags.length >= 9, withTags.map((r) => r.name).join(', '));
  for (const r of t.engine.registry.values()) {
    const tagged = withTags.includes(r);
    assert.is(r.listParameters.has('tags'), tagged, r.name);
    if (!r.routes && r.name !== 'event-type') continue;
    // Aliases answer as this path item (x-aliases): its parameters are theirs.
    const names = doc.paths[`/api/${r.paths[0]}`].get.parameters.map((p: any) => p.name);
    assert.is(names.includes('tags[]'), tagged, `/api/${r.paths[0]}`);
  }
});

test('time logs: tags are written (tags, tagIds), tags[] finds the logs with any of them, /count too', async () => {
  const log = async (tags: string[], at: string) => {
    const res = await t.http.post('/api/time-log').set(acme.auth).send({ employeeId, startedAt: at, stoppedAt: at, tagIds: tags });
    assert.is(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const a = await log([urgent], '2026-05-01T08:00:00Z');
  const b = await log([urgent, billable], '2026-05-01T09:00:00Z');
  const c = await log([], '2026-05-01T10:00:00Z');
  const ids = async (query: string) => {
    const res = await t.http.get(`/api/time-log?${query}&order[startedAt]=ASC`).set(acme.auth);
    assert.is(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    return res.body.items.map((item: { id: string }) => item.id);
  };
  assert.equal(await ids(`tags[]=${urgent}`), [a, b]);
  assert.equal(await ids(`tags[]=${billable}`), [b]);
  assert.equal(await ids(`tags[]=${billable}&tags[]=${urgent}`), [a, b]);
  assert.equal(await ids(`tags[0]=${billable}`), [b]);
  assert.equal(await ids(''), [a, b, c]);
  assert.equal((await t.http.get(`/api/timesheet/time-log/count?tags[]=${urgent}`).set(acme.auth)).body, { total: 2 });
  const search = await t.http.post('/api/time-log/search').set(acme.auth).send({ tags: [billable] });
  assert.equal(search.body.items.map((item: { id: string }) => item.id), [b]);
  // PATCH replaces the list; the links in the database follow.
  const patched = await t.http.patch(`/api/time-log/${c}`).set(acme.auth).send({ tags: [{ id: billable }] });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(await ids(`tags[]=${billable}`), [b, c]);
  assert.equal((await t.db('tag_time_log').where({ timeLogId: c })).map((row) => row.tagId), [billable]);
  // The time log's relations[] whitelist stays as it is: tags are filtered on, not loaded.
  assertError(await t.http.get(`/api/time-log/${c}?relations[]=tags`).set(acme.auth), 400, "relations: 'tags' is not allowed; allowed: employee, project, task, timeSlots");
});

test("tags[]: a malformed id is a 400; another tenant's tag finds nothing and cannot be attached", async () => {
  assertError(await t.http.get('/api/time-log?tags[]=urgent').set(acme.auth), 400, 'tags.0 must be a UUID');
  const theirs = await tag(other, 'Urgent');
  assert.equal((await t.http.get(`/api/time-log/count?tags[]=${theirs}`).set(acme.auth)).body, { total: 0 });
  assert.equal((await t.http.get(`/api/time-log/count?tags[]=${randomUUID()}`).set(acme.auth)).body, { total: 0 });
  const res = await t.http.post('/api/time-log').set(acme.auth).send({ employeeId, startedAt: '2026-05-02T08:00:00Z', tagIds: [theirs] });
  assertError(res, 400, 'tags must reference an existing tag');
});

test.run();
