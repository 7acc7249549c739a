// The work resources (resources/task.yaml and its neighbours): each one's happy path through
// HTTP, its rules, the ids taken from the caller, writable many-to-many relations limited to the
// caller's tenant, the tags[] filter and the relation whitelist. Writes are checked in the database.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { assertError, assertForbidden, assertNotFound } from '../helpers/error-envelope.js';
import { insertEmployees, insertTags, sorted } from '../helpers/list-data.js';

type Tenant = Session & { organizationId: string };

let t: TestApp;
let acme: Tenant;
let other: Tenant;
/** Employees and tags of acme, and of the other tenant. */
let ann: string, bob: string, red: string, blue: string;
let foreignEmployee: string, foreignTag: string;

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  [ann, bob] = (await insertEmployees(t, acme, [{ firstName: 'Ann' }, { firstName: 'Bob' }])).map((e) => e.id);
  [red, blue] = await insertTags(t, acme, ['red', 'blue']);
  [foreignEmployee] = (await insertEmployees(t, other, [{ firstName: 'Zed' }])).map((e) => e.id);
  [foreignTag] = await insertTags(t, other, ['foreign']);
});
test.after(async () => {
  await t.close();
});

const MISSING_ID = '00000000-0000-4000-8000-000000000000';

async function create(path: string, body: Record<string, unknown>, session: Session = acme) {
  const res = await t.http.post(`/api/${path}`).set(session.auth).send(body);
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body as Record<string, any>;
}

const linked = async (table: string, from: string, id: string, to: string) =>
  sorted((await t.db(table).where({ [from]: id }).select(to)).map((r) => r[to] as string));

/**
 * The generic round trip of one resource: create, read, list (the record is in it), replace,
 * modify, delete (then 404 and the row gone), each checked against the stored row.
 */
async function roundTrip(path: string, table: string, body: Record<string, unknown>, replace: Record<string, unknown>, patch: Record<string, unknown>) {
  const created = await create(path, body);
  assert.is(created.tenantId, acme.tenantId);
  assert.is(created.organizationId, acme.organizationId);
  for (const [key, value] of Object.entries(body)) if (!Array.isArray(value)) assert.equal(created[key], value, key);
  const id = created.id as string;

  const read = await t.http.get(`/api/${path}/${id}`).set(acme.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  assert.equal(read.body, created);

  const list = await t.http.get(`/api/${path}`).set(acme.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  assert.ok(list.body.items.some((item: { id: string }) => item.id === id), 'the new record is listed');
  const foreignList = await t.http.get(`/api/${path}`).set(other.auth);
  assert.not.ok(foreignList.body.items.some((item: { id: string }) => item.id === id), 'another tenant does not list it');
  assertNotFound(await t.http.get(`/api/${path}/${id}`).set(other.auth));

  const replaced = await t.http.put(`/api/${path}/${id}`).set(acme.auth).send(replace);
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  for (const [key, value] of Object.entries(replace)) if (!Array.isArray(value)) assert.equal(replaced.body[key], value, key);

  const patched = await t.http.patch(`/api/${path}/${id}`).set(acme.auth).send(patch);
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  for (const [key, value] of Object.entries(patch)) if (!Array.isArray(value)) assert.equal(patched.body[key], value, key);
  const row = await t.db(table).where({ id }).first();
  const stored = (value: unknown) => (value instanceof Date ? value.toISOString() : value);
  for (const [key, value] of Object.entries(patch)) if (!Array.isArray(value)) assert.equal(stored(row[key]), value, `stored ${key}`);

  assert.is((await t.http.delete(`/api/${path}/${id}`).set(acme.auth)).status, 204);
  assertNotFound(await t.http.get(`/api/${path}/${id}`).set(acme.auth));
  // A softDelete resource keeps the row, marked deleted.
  const left = await t.db(table).where({ id }).first();
  if ([...t.engine.registry.values()].find((r) => r.table === table)!.softDelete) assert.ok(left?.deletedAt, 'the row is marked deleted');
  else assert.not.ok(left, 'the row is gone');
}

// ---------------------------------------------------------------------------------------------
// Happy paths

test('organization-contact: create, read, list, replace, modify, delete', async () => {
  await roundTrip(
    'organization-contact',
    'organization_contact',
    { name: 'Globex', primaryEmail: 'buyer@globex.example', contactType: 'CLIENT', budget: 1000, budgetType: 'cost' },
    { name: 'Globex Corp', contactType: 'LEAD' },
    { primaryPhone: '+33 1 23 45 67 89', budgetType: 'hours' },
  );
});

test('organization-project: create, read, list, replace, modify, delete (also under /api/organization-projects)', async () => {
  await roundTrip(
    'organization-project',
    'organization_project',
    { name: 'Apollo', billing: 'RATE', currency: 'EUR', public: true, billable: false, owner: 'CLIENT', budget: 40, budgetType: 'hours', color: '#00ff00' },
    { name: 'Apollo 2', owner: 'INTERNAL' },
    { description: 'To the moon', billable: true },
  );
  await roundTrip('organization-projects', 'organization_project', { name: 'Gemini' }, { name: 'Gemini 2' }, { color: 'blue' });
});

test('organization-team: create, read, list, replace, modify, delete; public defaults to false', async () => {
  const team = await create('organization-team', { name: 'Core' });
  assert.is(team.public, false);
  await roundTrip('organization-team', 'organization_team', { name: 'Blue', color: '#0000ff', emoji: '🐳', public: true }, { name: 'Red' }, { public: true });
});

test('organization-sprint: create, read, list, replace, modify, delete; length defaults to 7 days', async () => {
  const project = await create('organization-project', { name: 'Sprinting' });
  const sprint = await create('organization-sprint', { name: 'S0', projectId: project.id });
  assert.is(sprint.length, 7);
  await roundTrip(
    'organization-sprint',
    'organization_sprint',
    { name: 'S1', projectId: project.id, length: 14, goal: 'Ship', status: 'active', dayStart: 1 },
    { name: 'S1 again', projectId: project.id },
    { status: 'completed', dayStart: 7 },
  );
});

test('task: create, read, list, replace, modify, delete (also under /api/tasks); defaults applied', async () => {
  const task = await create('task', { title: 'Defaults' });
  assert.is(task.status, 'open');
  assert.is(task.isDraft, false);
  assert.is(task.public, true);
  assert.is(task.priority, null);
  const project = await create('organization-project', { name: 'Tasks home' });
  await roundTrip(
    'task',
    'task',
    { title: 'Write docs', description: 'All of them', status: 'in-progress', priority: 'high', size: 'small', estimate: 3600, number: 12, prefix: 'DOC', projectId: project.id },
    { title: 'Write docs again', status: 'blocked' },
    { priority: 'urgent', isDraft: true },
  );
  await roundTrip('tasks', 'task', { title: 'Alias' }, { title: 'Alias 2' }, { status: 'done' });
});

test('screening-task: create, read, list, replace, modify, delete (also under /api/screening-tasks); status defaults to pending', async () => {
  const task = await create('task', { title: 'To screen' });
  const screening = await create('screening-task', { taskId: task.id });
  assert.is(screening.status, 'pending');
  await roundTrip('screening-task', 'screening_task', { taskId: task.id, status: 'snoozed' }, { taskId: task.id, status: 'accepted' }, { status: 'declined' });
  await roundTrip('screening-tasks', 'screening_task', { taskId: task.id }, { taskId: task.id, status: 'duplicated' }, { status: 'pending' });
});

test('comment: create, read, list, replace, modify, delete; actorType defaults to User, resolved to false', async () => {
  const task = await create('task', { title: 'Commented' });
  const comment = await create('comment', { entity: 'Task', entityId: task.id, comment: 'First!' });
  assert.is(comment.actorType, 'User');
  assert.is(comment.resolved, false);
  assert.is(comment.employeeId, null, 'an admin without an employee record leaves employeeId empty');
  await roundTrip(
    'comment',
    'comment',
    { entity: 'Task', entityId: task.id, comment: 'Looks good', actorType: 'System' },
    { entity: 'Employee', entityId: ann, comment: 'Moved' },
    { resolved: true, resolvedAt: '2026-03-01T10:00:00.000Z' },
  );
});

// ---------------------------------------------------------------------------------------------
// Field rules

test('required fields and enums: a 400 naming each', async () => {
  assertError(await t.http.post('/api/task').set(acme.auth).send({}), 400, 'title should not be empty');
  assertError(await t.http.post('/api/task').set(acme.auth).send({ title: 'x', status: 'OPEN' }), 400, /^status must be one of the following values: open, in-progress/);
  assertError(await t.http.post('/api/task').set(acme.auth).send({ title: 'x', estimate: -1 }), 400, /^estimate must not be less than 0/);
  assertError(await t.http.post('/api/organization-sprint').set(acme.auth).send({ name: 'S' }), 400, 'projectId should not be empty');
  assertError(await t.http.post('/api/organization-sprint').set(acme.auth).send({ name: 'S', projectId: MISSING_ID, dayStart: 8 }), 400, /^dayStart must not be greater than 7/);
  assertError(await t.http.post('/api/screening-task').set(acme.auth).send({ status: 'pending' }), 400, 'taskId should not be empty');
  assertError(await t.http.post('/api/comment').set(acme.auth).send({ entity: 'Nope', entityId: MISSING_ID, comment: 'x' }), 400, /^entity must be one of the following values/);
  assertError(await t.http.post('/api/comment').set(acme.auth).send({ entity: 'Task', entityId: MISSING_ID }), 400, 'comment should not be empty');
  assertError(await t.http.post('/api/organization-contact').set(acme.auth).send({ name: 'C', primaryEmail: 'not-an-email' }), 400, /^primaryEmail must be an email/);
  assertError(await t.http.post('/api/organization-project').set(acme.auth).send({ name: 'P', billing: 'HOURLY' }), 400, /^billing must be one of the following values/);
  assert.is(Number((await t.db('task').where({ title: 'x' }).count({ n: '*' }))[0].n), 0, 'nothing was written');
});

test('a reference to a record that does not exist, or is another tenant\'s, is a 400', async () => {
  assertError(await t.http.post('/api/organization-sprint').set(acme.auth).send({ name: 'S', projectId: MISSING_ID }), 400, 'projectId must reference an existing organization-project');
  const foreignProject = await create('organization-project', { name: 'Theirs' }, other);
  assertError(await t.http.post('/api/task').set(acme.auth).send({ title: 'x', projectId: foreignProject.id }), 400, 'projectId must reference an existing organization-project');
  const foreignTask = await create('task', { title: 'Theirs' }, other);
  assertError(await t.http.post('/api/screening-task').set(acme.auth).send({ taskId: foreignTask.id }), 400, 'taskId must reference an existing task');
});

test('project and sprint: endDate before startDate is a 400 with the rule\'s message; equal or later is fine', async () => {
  const bad = await t.http.post('/api/organization-project').set(acme.auth).send({ name: 'Backwards', startDate: '2026-03-10', endDate: '2026-03-01' });
  assertError(bad, 400, 'endDate must not be earlier than startDate');
  assert.not.ok(await t.db('organization_project').where({ name: 'Backwards' }).first());
  const project = await create('organization-project', { name: 'Forwards', startDate: '2026-03-01', endDate: '2026-03-01' });
  // A patch of one side is checked against the stored other side.
  assertError(await t.http.patch(`/api/organization-project/${project.id}`).set(acme.auth).send({ endDate: '2026-02-01' }), 400, 'endDate must not be earlier than startDate');
  assert.equal((await t.db('organization_project').where({ id: project.id }).first()).endDate, new Date('2026-03-01T00:00:00.000Z'));

  const sprint = await t.http.post('/api/organization-sprint').set(acme.auth).send({ name: 'Sx', projectId: project.id, startDate: '2026-03-10', endDate: '2026-03-09' });
  assertError(sprint, 400, 'endDate must not be earlier than startDate');
  const ok = await create('organization-sprint', { name: 'Sy', projectId: project.id, startDate: '2026-03-10', endDate: '2026-03-24' });
  assertError(await t.http.patch(`/api/organization-sprint/${ok.id}`).set(acme.auth).send({ startDate: '2026-04-01' }), 400, 'endDate must not be earlier than startDate');
});

// ---------------------------------------------------------------------------------------------
// Values taken from the caller

test('task and screening-task: creatorId is always the caller\'s user, whatever the body says', async () => {
  const someoneElse = await userWithRole(t, acme, 'MANAGER');
  const task = await create('task', { title: 'Mine', creatorId: someoneElse.userId });
  assert.is(task.creatorId, acme.userId);
  assert.is((await t.db('task').where({ id: task.id }).first()).creatorId, acme.userId);
  const byManager = await create('task', { title: 'The manager\'s' }, someoneElse);
  assert.is(byManager.creatorId, someoneElse.userId);
  const patched = await t.http.patch(`/api/task/${task.id}`).set(acme.auth).send({ creatorId: someoneElse.userId, title: 'Still mine' });
  assert.is(patched.status, 200);
  assert.is(patched.body.creatorId, acme.userId, 'an update does not change the creator');

  const screening = await create('screening-task', { taskId: task.id, creatorId: someoneElse.userId }, someoneElse);
  assert.is(screening.creatorId, someoneElse.userId);
  const withCreator = await t.http.get(`/api/task/${task.id}?relations[]=creator`).set(acme.auth);
  assert.is(withCreator.status, 200, JSON.stringify(withCreator.body));
  assert.is(withCreator.body.creator.id, acme.userId);
  assert.not.ok('hash' in withCreator.body.creator);
});

test('comment: employeeId defaults to the caller\'s employee record; one sent in the body is kept', async () => {
  const employee = await userWithRole(t, acme, 'MANAGER', true);
  const task = await create('task', { title: 'Discussed' });
  const own = await create('comment', { entity: 'Task', entityId: task.id, comment: 'Mine' }, employee);
  assert.is(own.employeeId, employee.employeeId);
  const forAnn = await create('comment', { entity: 'Task', entityId: task.id, comment: 'For Ann', employeeId: ann }, employee);
  assert.is(forAnn.employeeId, ann);
  const reply = await create('comment', { entity: 'Task', entityId: task.id, comment: 'Reply', parentId: own.id }, employee);
  const read = await t.http.get(`/api/comment/${own.id}?relations[]=replies&relations[]=employee`).set(acme.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  assert.equal(read.body.replies.map((r: { id: string }) => r.id), [reply.id]);
  assert.is(read.body.employee.id, employee.employeeId);
  const parent = await t.http.get(`/api/comment/${reply.id}?relations[]=parent`).set(acme.auth);
  assert.is(parent.body.parent.id, own.id);
});

// ---------------------------------------------------------------------------------------------
// Writable many-to-many relations

test('task: members, teams and tags are set on create and replaced on update', async () => {
  const team = await create('organization-team', { name: 'Task team' });
  const task = await create('task', { title: 'Linked', memberIds: [ann, bob], teams: [{ id: team.id }], tagIds: [red] });
  assert.equal(await linked('task_employee', 'taskId', task.id, 'employeeId'), sorted([ann, bob]));
  assert.equal(await linked('task_team', 'taskId', task.id, 'organizationTeamId'), [team.id]);
  assert.equal(await linked('tag_task', 'taskId', task.id, 'tagId'), [red]);

  const read = await t.http.get(`/api/tasks/${task.id}?relations=members,teams,tags`).set(acme.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  assert.equal(sorted(read.body.members.map((m: { id: string }) => m.id)), sorted([ann, bob]));
  assert.equal(read.body.teams.map((m: { id: string }) => m.id), [team.id]);
  assert.equal(read.body.tags.map((m: { id: string }) => m.id), [red]);

  const patched = await t.http.patch(`/api/task/${task.id}`).set(acme.auth).send({ members: [{ id: bob }], tagIds: [red, blue] });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(await linked('task_employee', 'taskId', task.id, 'employeeId'), [bob]);
  assert.equal(await linked('tag_task', 'taskId', task.id, 'tagId'), sorted([red, blue]));
  assert.equal(await linked('task_team', 'taskId', task.id, 'organizationTeamId'), [team.id], 'teams not sent stay linked');

  const replaced = await t.http.put(`/api/task/${task.id}`).set(acme.auth).send({ title: 'Unlinked', teamIds: [] });
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.equal(await linked('task_team', 'taskId', task.id, 'organizationTeamId'), []);
});

test('project and team: members are set on create and update; project tags too', async () => {
  const project = await create('organization-project', { name: 'Staffed', memberIds: [ann], tagIds: [blue] });
  assert.equal(await linked('organization_project_employee', 'organizationProjectId', project.id, 'employeeId'), [ann]);
  assert.equal(await linked('tag_organization_project', 'organizationProjectId', project.id, 'tagId'), [blue]);
  const patched = await t.http.patch(`/api/organization-projects/${project.id}`).set(acme.auth).send({ memberIds: [ann, bob] });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(await linked('organization_project_employee', 'organizationProjectId', project.id, 'employeeId'), sorted([ann, bob]));

  const team = await create('organization-team', { name: 'Staffed team', members: [{ id: bob }] });
  assert.equal(await linked('organization_team_employee', 'organizationTeamId', team.id, 'employeeId'), [bob]);
  const replaced = await t.http.put(`/api/organization-team/${team.id}`).set(acme.auth).send({ name: 'Staffed team', memberIds: [ann] });
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.equal(await linked('organization_team_employee', 'organizationTeamId', team.id, 'employeeId'), [ann]);
  const read = await t.http.get(`/api/organization-team/${team.id}?relations[]=members`).set(acme.auth);
  assert.equal(read.body.members.map((m: { id: string }) => m.id), [ann]);
});

test('many-to-many ids of another tenant are a 400 and nothing is written or changed', async () => {
  const tasks = Number((await t.db('task').count({ n: '*' }))[0].n);
  assertError(await t.http.post('/api/task').set(acme.auth).send({ title: 'Foreign', memberIds: [ann, foreignEmployee] }), 400, 'members must reference an existing employee');
  assertError(await t.http.post('/api/task').set(acme.auth).send({ title: 'Foreign', tags: [{ id: foreignTag }] }), 400, 'tags must reference an existing tag');
  const foreignTeam = await create('organization-team', { name: 'Their team' }, other);
  assertError(await t.http.post('/api/task').set(acme.auth).send({ title: 'Foreign', teamIds: [foreignTeam.id] }), 400, 'teams must reference an existing organization-team');
  assert.is(Number((await t.db('task').count({ n: '*' }))[0].n), tasks);

  const task = await create('task', { title: 'Kept', memberIds: [ann] });
  assertError(await t.http.patch(`/api/task/${task.id}`).set(acme.auth).send({ title: 'Changed', memberIds: [foreignEmployee] }), 400, 'members must reference an existing employee');
  assert.is((await t.db('task').where({ id: task.id }).first()).title, 'Kept');
  assert.equal(await linked('task_employee', 'taskId', task.id, 'employeeId'), [ann]);

  assertError(await t.http.post('/api/organization-project').set(acme.auth).send({ name: 'Foreign', memberIds: [foreignEmployee] }), 400, 'members must reference an existing employee');
  const team = await create('organization-team', { name: 'Mine' });
  assertError(await t.http.put(`/api/organization-team/${team.id}`).set(acme.auth).send({ name: 'Mine', memberIds: [foreignEmployee] }), 400, 'members must reference an existing employee');
  assert.equal(await linked('organization_team_employee', 'organizationTeamId', team.id, 'employeeId'), []);
  assertError(await t.http.post('/api/organization-contact').set(acme.auth).send({ name: 'Foreign', tagIds: [foreignTag] }), 400, 'tags must reference an existing tag');
});

// ---------------------------------------------------------------------------------------------
// Lists

test('tasks: tags[] keeps the tasks with any of the tags; status, priority and projectId filter', async () => {
  const project = await create('organization-project', { name: 'Filtered' });
  const redTask = await create('task', { title: 'F red', tagIds: [red], status: 'blocked', priority: 'low', projectId: project.id });
  const blueTask = await create('task', { title: 'F blue', tagIds: [blue], priority: 'low' });
  await create('task', { title: 'F none', priority: 'low' });
  const titles = async (query: string) => {
    const res = await t.http.get(`/api/tasks?${query}`).set(acme.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    return sorted(res.body.items.map((item: { title: string }) => item.title).filter((title: string) => title.startsWith('F ')));
  };
  assert.equal(await titles(`tags[]=${red}`), ['F red']);
  assert.equal(await titles(`tags[]=${red}&tags[]=${blue}`), ['F blue', 'F red']);
  assert.equal(await titles(`tags[]=${foreignTag}`), []);
  assert.equal(await titles('where[status]=blocked'), ['F red']);
  assert.equal(await titles('where[priority]=low'), ['F blue', 'F none', 'F red']);
  assert.equal(await titles(`where[projectId]=${project.id}`), ['F red']);
  const byTitle = await t.http.get('/api/task?where[priority]=low&order[title]=DESC').set(acme.auth);
  assert.is(byTitle.status, 200, JSON.stringify(byTitle.body));
  const order = byTitle.body.items.map((i: { id: string }) => i.id);
  assert.ok(order.indexOf(redTask.id) < order.indexOf(blueTask.id), 'F red before F blue, title descending');
});

test('relations: the whitelist of each resource; anything else is a 400 naming the allowed ones', async () => {
  const allowed: Record<string, string> = {
    task: 'project, creator, members, teams, tags',
    'organization-project': 'members, teams, tasks, tags, organizationContact',
    'organization-team': 'members, tags',
    'organization-sprint': 'project, tasks',
    'organization-contact': 'tags, projects',
    'screening-task': 'task, creator',
    comment: 'employee, parent, replies',
  };
  for (const [path, list] of Object.entries(allowed)) {
    assertError(await t.http.get(`/api/${path}?relations[]=salary`).set(acme.auth), 400, `relations: 'salary' is not allowed; allowed: ${list}`);
  }
  assertError(await t.http.get('/api/task?relations[]=organizationSprint').set(acme.auth), 400, "relations: 'organizationSprint' is not allowed; allowed: project, creator, members, teams, tags");

  const contact = await create('organization-contact', { name: 'Deep' });
  const project = await create('organization-project', { name: 'Deep', organizationContactId: contact.id });
  const sprint = await create('organization-sprint', { name: 'Deep', projectId: project.id });
  const task = await create('task', { title: 'Deep', projectId: project.id, organizationSprintId: sprint.id });
  const deep = await t.http.get(`/api/task/${task.id}?relations[]=project.organizationContact.tags`).set(acme.auth);
  assert.is(deep.status, 200, JSON.stringify(deep.body));
  assert.is(deep.body.project.id, project.id);
  assert.is(deep.body.project.organizationContact.id, contact.id);
  assert.equal(deep.body.project.organizationContact.tags, []);
  const sprintTasks = await t.http.get(`/api/organization-sprint/${sprint.id}?relations[]=tasks&relations[]=project`).set(acme.auth);
  assert.equal(sprintTasks.body.tasks.map((x: { id: string }) => x.id), [task.id]);
  assert.is(sprintTasks.body.project.id, project.id);
  const contactProjects = await t.http.get(`/api/organization-contact/${contact.id}?relations[]=projects`).set(acme.auth);
  assert.equal(contactProjects.body.projects.map((x: { id: string }) => x.id), [project.id]);
});

// ---------------------------------------------------------------------------------------------
// Permissions

test('permissions: an EMPLOYEE reads tasks and projects but does not write them; it writes comments', async () => {
  const employee = await userWithRole(t, acme, 'EMPLOYEE', true);
  const task = await create('task', { title: 'Visible' });
  assert.is((await t.http.get(`/api/task/${task.id}`).set(employee.auth)).status, 200);
  assert.is((await t.http.get('/api/organization-project').set(employee.auth)).status, 200);
  assertForbidden(await t.http.post('/api/task').set(employee.auth).send({ title: 'Nope' }));
  assertForbidden(await t.http.patch(`/api/task/${task.id}`).set(employee.auth).send({ title: 'Nope' }));
  assertForbidden(await t.http.post('/api/organization-project').set(employee.auth).send({ name: 'Nope' }));
  const comment = await create('comment', { entity: 'Task', entityId: task.id, comment: 'From the team' }, employee);
  assert.is(comment.employeeId, employee.employeeId);

  const viewer = await userWithRole(t, acme, 'VIEWER');
  assert.is((await t.http.get('/api/tasks').set(viewer.auth)).status, 200);
  assertForbidden(await t.http.post('/api/comment').set(viewer.auth).send({ entity: 'Task', entityId: task.id, comment: 'Nope' }));
  const candidate = await userWithRole(t, acme, 'CANDIDATE');
  assertForbidden(await t.http.get('/api/tasks').set(candidate.auth));
});

test.run();
