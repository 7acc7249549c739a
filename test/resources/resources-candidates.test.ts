// Candidates (resources/candidate.yaml) with their sources, interviews and skills: defaults and
// field rules, the interview's endTime >= startTime rule, skills set by ids of the caller's
// tenant only, the relations[] whitelist of the definitions, permissions and tenant isolation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { assertError, assertForbidden, assertNotFound } from '../helpers/error-envelope.js';

type Tenant = Awaited<ReturnType<typeof newTenant>>;
let t: TestApp;
let acme: Tenant;
let other: Tenant;
let viewer: Session;
let employee: Session;
let java: string, rust: string, foreignSkill: string;
let referral: string, foreignSource: string;

const skill = async (tenant: Tenant, name: string) => {
  const res = await t.http.post('/api/skill').set(tenant.auth).send({ name });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.id as string;
};

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  viewer = await userWithRole(t, acme, 'VIEWER');
  employee = await userWithRole(t, acme, 'EMPLOYEE', true);
  [java, rust, foreignSkill] = [await skill(acme, 'Java'), await skill(acme, 'Rust'), await skill(other, 'Cobol')];
  referral = (await t.http.post('/api/candidate-source').set(acme.auth).send({ name: 'Referral' })).body.id;
  foreignSource = (await t.http.post('/api/candidate-source').set(other.auth).send({ name: 'Their board' })).body.id;
});
test.after(async () => {
  await t.close();
});

const linkedSkills = async (candidateId: string) =>
  (await t.db('candidate_skill').where({ candidateId }).select('skillId')).map((r) => r.skillId).sort();

const newCandidate = async (body: Record<string, unknown> = {}) => {
  const res = await t.http.post('/api/candidate').set(acme.auth).send({ userId: viewer.userId, ...body });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body;
};

test('candidate: create answers 201 with the defaults; the row holds what was sent', async () => {
  const body = await newCandidate({ appliedDate: '2026-03-02', rating: 4.5, cvUrl: 'https://example.com/cv.pdf', sourceId: referral, candidateLevel: 'Senior' });
  assert.is(body.status, 'APPLIED', 'the YAML default');
  assert.is(body.appliedDate, '2026-03-02T00:00:00.000Z');
  assert.is(body.rating, 4.5);
  assert.is(body.organizationId, acme.organizationId);
  const row = await t.db('candidate').where({ id: body.id }).first();
  assert.is(row.status, 'APPLIED');
  assert.is(row.userId, viewer.userId);
  assert.is(row.sourceId, referral);
  assert.is(row.tenantId, acme.tenantId);
});

test('candidate: required userId, the status enum, rating 0 to 5, a URL cv, references in the tenant', async () => {
  const before = (await t.db('candidate').count({ n: '*' }))[0].n;
  assertError(await t.http.post('/api/candidate').set(acme.auth).send({}), 400, 'userId should not be empty');
  const bad = await t.http.post('/api/candidate').set(acme.auth).send({ userId: viewer.userId, status: 'INTERVIEWING', rating: 5.5, cvUrl: 'not a url' });
  assertError(bad, 400, 'status must be one of the following values: APPLIED, REJECTED, HIRED', 'rating must not be greater than 5', 'cvUrl must be a URL address');
  assertError(await t.http.post('/api/candidate').set(acme.auth).send({ userId: viewer.userId, rating: -1 }), 400, 'rating must not be less than 0');
  assertError(await t.http.post('/api/candidate').set(acme.auth).send({ userId: other.userId }), 400, 'userId must reference an existing user');
  assertError(await t.http.post('/api/candidate').set(acme.auth).send({ userId: viewer.userId, sourceId: foreignSource }), 400, 'sourceId must reference an existing candidate-source');
  assert.is((await t.db('candidate').count({ n: '*' }))[0].n, before, 'nothing written');
  // The bounds themselves are allowed.
  assert.is((await newCandidate({ rating: 0 })).rating, 0);
  assert.is((await newCandidate({ rating: 5, status: 'HIRED' })).status, 'HIRED');
});

test('candidate skills: set on create by skills [{id}] and skillIds, replaced on update, cleared by PUT without them', async () => {
  const created = await newCandidate({ skills: [{ id: java }], skillIds: [rust] });
  assert.equal(await linkedSkills(created.id), [java, rust].sort());
  const patched = await t.http.patch(`/api/candidate/${created.id}`).set(acme.auth).send({ skillIds: [rust] });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(await linkedSkills(created.id), [rust]);
  // PATCH without skills leaves them; PUT without them resets them to none.
  await t.http.patch(`/api/candidate/${created.id}`).set(acme.auth).send({ rating: 3 }).expect(200);
  assert.equal(await linkedSkills(created.id), [rust]);
  await t.http.put(`/api/candidate/${created.id}`).set(acme.auth).send({ userId: viewer.userId }).expect(200);
  assert.equal(await linkedSkills(created.id), []);
});

test("candidate skills: another tenant's skill id is a 400 and nothing changes", async () => {
  const before = (await t.db('candidate').count({ n: '*' }))[0].n;
  const res = await t.http.post('/api/candidate').set(acme.auth).send({ userId: viewer.userId, skillIds: [java, foreignSkill] });
  assertError(res, 400, 'skills must reference an existing skill');
  assert.is((await t.db('candidate').count({ n: '*' }))[0].n, before);
  const created = await newCandidate({ skillIds: [java] });
  assertError(await t.http.patch(`/api/candidate/${created.id}`).set(acme.auth).send({ skills: [{ id: foreignSkill }] }), 400, 'skills must reference an existing skill');
  assert.equal(await linkedSkills(created.id), [java], 'the links are unchanged');
});

test('candidate relations: user, source, interview and skills load; anything else is a 400', async () => {
  const created = await newCandidate({ sourceId: referral, skillIds: [java] });
  const interview = await t.http.post('/api/candidate-interview').set(acme.auth).send({ candidateId: created.id, title: 'First call' });
  assert.is(interview.status, 201, JSON.stringify(interview.body));
  const res = await t.http.get(`/api/candidate/${created.id}?relations[]=user&relations[]=source&relations[]=interview&relations[]=skills`).set(acme.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.user.id, viewer.userId);
  assert.not.ok('hash' in res.body.user);
  assert.is(res.body.source.name, 'Referral');
  assert.equal(res.body.interview.map((i: any) => i.title), ['First call']);
  assert.equal(res.body.skills.map((s: any) => s.name), ['Java']);
  // Dot notation below a whitelisted relation.
  const nested = await t.http.get(`/api/candidate/${created.id}?relations[]=user.role`).set(acme.auth);
  assert.is(nested.status, 200, JSON.stringify(nested.body));
  assert.is(nested.body.user.role.name, 'VIEWER');
  for (const unlisted of ['tags', 'employee', 'organization']) {
    assertError(await t.http.get(`/api/candidate/${created.id}?relations[]=${unlisted}`).set(acme.auth), 400, `relations: '${unlisted}' is not allowed; allowed: user, source, interview, skills`);
    assertError(await t.http.get(`/api/candidate?relations[]=${unlisted}`).set(acme.auth), 400, `relations: '${unlisted}' is not allowed; allowed: user, source, interview, skills`);
  }
});

test('candidate-interview: endTime before startTime is a 400 with the rule\'s message, on create and on a partial update', async () => {
  const candidate = await newCandidate();
  const before = (await t.db('candidate_interview').count({ n: '*' }))[0].n;
  const bad = await t.http
    .post('/api/candidate-interview')
    .set(acme.auth)
    .send({ candidateId: candidate.id, title: 'Backwards', startTime: '2026-03-02T10:00:00Z', endTime: '2026-03-02T09:00:00Z' });
  assertError(bad, 400, 'endTime must not be earlier than startTime');
  assert.is((await t.db('candidate_interview').count({ n: '*' }))[0].n, before, 'nothing written');
  const ok = await t.http
    .post('/api/candidate-interview')
    .set(acme.auth)
    .send({ candidateId: candidate.id, title: 'On time', startTime: '2026-03-02T10:00:00Z', endTime: '2026-03-02T10:00:00Z', location: 'Room 1' });
  assert.is(ok.status, 201, JSON.stringify(ok.body));
  assert.is(ok.body.isArchived, false, 'the YAML default');
  // A PATCH of one side only is checked against the stored other side.
  assertError(await t.http.patch(`/api/candidate-interview/${ok.body.id}`).set(acme.auth).send({ endTime: '2026-03-01T10:00:00Z' }), 400, 'endTime must not be earlier than startTime');
  const row = await t.db('candidate_interview').where({ id: ok.body.id }).first();
  assert.is(new Date(row.endTime).toISOString(), '2026-03-02T10:00:00.000Z', 'unchanged');
  const moved = await t.http.patch(`/api/candidate-interview/${ok.body.id}`).set(acme.auth).send({ endTime: '2026-03-02T11:30:00Z' });
  assert.is(moved.status, 200, JSON.stringify(moved.body));
  assert.is(moved.body.endTime, '2026-03-02T11:30:00.000Z');
  const read = await t.http.get(`/api/candidate-interview/${ok.body.id}?relations[]=candidate`).set(acme.auth);
  assert.is(read.body.candidate.id, candidate.id);
});

test('candidate-interview: the candidate is required and must be in the tenant', async () => {
  assertError(await t.http.post('/api/candidate-interview').set(acme.auth).send({ title: 'Nobody' }), 400, 'candidateId should not be empty');
  const theirs = await t.http.post('/api/candidate').set(other.auth).send({ userId: other.userId });
  assert.is(theirs.status, 201, JSON.stringify(theirs.body));
  assertError(await t.http.post('/api/candidate-interview').set(acme.auth).send({ candidateId: theirs.body.id, title: 'Theirs' }), 400, 'candidateId must reference an existing candidate');
});

test('candidate-source: CRUD, and deleting a source leaves its candidates without one', async () => {
  const source = await t.http.post('/api/candidate-source').set(acme.auth).send({ name: 'Job board' });
  assert.is(source.status, 201, JSON.stringify(source.body));
  assertError(await t.http.post('/api/candidate-source').set(acme.auth).send({}), 400, 'name should not be empty');
  const candidate = await newCandidate({ sourceId: source.body.id });
  const renamed = await t.http.put(`/api/candidate-source/${source.body.id}`).set(acme.auth).send({ name: 'Jobs board' });
  assert.is(renamed.body.name, 'Jobs board');
  await t.http.delete(`/api/candidate-source/${source.body.id}`).set(acme.auth).expect(204);
  assert.is((await t.db('candidate').where({ id: candidate.id }).first()).sourceId, null);
});

test('permissions: VIEWER reads candidates but cannot write them; EMPLOYEE cannot read them', async () => {
  const created = await newCandidate();
  const read = await t.http.get(`/api/candidate/${created.id}`).set(viewer.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  assertForbidden(await t.http.post('/api/candidate').set(viewer.auth).send({ userId: viewer.userId }));
  assertForbidden(await t.http.patch(`/api/candidate/${created.id}`).set(viewer.auth).send({ rating: 1 }));
  assertForbidden(await t.http.get('/api/candidate').set(employee.auth));
  assertForbidden(await t.http.get('/api/candidate-interview').set(employee.auth));
});

test('tenant isolation: another tenant gets 404 and the candidate is unchanged', async () => {
  const created = await newCandidate({ rating: 2 });
  assertNotFound(await t.http.get(`/api/candidate/${created.id}`).set(other.auth));
  assertNotFound(await t.http.patch(`/api/candidate/${created.id}`).set(other.auth).send({ rating: 5 }));
  assertNotFound(await t.http.delete(`/api/candidate/${created.id}`).set(other.auth));
  const row = await t.db('candidate').where({ id: created.id }).first();
  assert.is(row.rating, 2);
  const theirs = await t.http.get('/api/candidate').set(other.auth);
  assert.not.ok(theirs.body.items.some((c: any) => c.id === created.id));
});

test('deleting a candidate (soft) keeps its interviews and skill links; recover brings it back whole', async () => {
  const created = await newCandidate({ skillIds: [java] });
  await t.http.post('/api/candidate-interview').set(acme.auth).send({ candidateId: created.id, title: 'Kept' }).expect(201);
  await t.http.delete(`/api/candidate/${created.id}`).set(acme.auth).expect(204);
  assert.ok((await t.db('candidate').where({ id: created.id }).first()).deletedAt);
  assert.is(Number((await t.db('candidate_interview').where({ candidateId: created.id }).count({ n: '*' }))[0].n), 1);
  assert.equal(await linkedSkills(created.id), [java]);
  // A deleted candidate is no reference for a new interview.
  const refused = await t.http.post('/api/candidate-interview').set(acme.auth).send({ candidateId: created.id, title: 'Late' });
  assert.is(refused.status, 400, JSON.stringify(refused.body));
  const recovered = await t.http.put(`/api/candidate/${created.id}/recover`).set(acme.auth);
  assert.is(recovered.status, 200, JSON.stringify(recovered.body));
  const read = await t.http.get(`/api/candidate/${created.id}?relations=interview`).set(acme.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
});

test.run();
