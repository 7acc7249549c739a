// Roles map to permissions through config/roles.yaml and each resource names the
// permission it needs. Every role of the slice against employee, organization, tags and skill:
// reads and writes answer 2xx or 403 "Forbidden resource", and a refused write leaves no trace.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, PASSWORD, uniqueEmail, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertForbidden } from '../helpers/error-envelope.js';

type Role = 'SUPER_ADMIN' | 'ADMIN' | 'MANAGER' | 'DATA_ENTRY' | 'EMPLOYEE' | 'CANDIDATE' | 'VIEWER' | 'INTERVIEWER';
type Resource = 'employee' | 'organization' | 'tags' | 'skill';

const ALL: Role[] = ['SUPER_ADMIN', 'ADMIN', 'MANAGER', 'DATA_ENTRY', 'EMPLOYEE', 'CANDIDATE', 'VIEWER', 'INTERVIEWER'];
const ADMINS: Role[] = ['SUPER_ADMIN', 'ADMIN', 'MANAGER'];

/** Who may do what, written out here (not read from roles.yaml) so a change there must be meant. */
const EXPECTED: Record<Resource, { read: Role[]; write: Role[] }> = {
  employee: { read: ['SUPER_ADMIN', 'ADMIN', 'MANAGER', 'DATA_ENTRY', 'VIEWER'], write: ADMINS },
  organization: { read: ['SUPER_ADMIN', 'ADMIN', 'MANAGER', 'DATA_ENTRY', 'VIEWER'], write: ADMINS },
  tags: { read: ALL, write: ADMINS },
  skill: { read: ALL, write: ADMINS },
};

const TABLES: Record<Resource, string> = { employee: 'employee', organization: 'organization', tags: 'tag', skill: 'skill' };

let t: TestApp;
let owner: Session & { organizationId: string };
const sessions = new Map<Role, Session>();
/** One existing record per resource, to read, modify and (last) delete. */
const existing = {} as Record<Resource, string>;

async function newUserId(): Promise<string> {
  const res = await t.http.post('/api/auth/register').set(owner.auth).send({ user: { email: uniqueEmail('staff') }, password: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

let counter = 0;
async function createBody(resource: Resource): Promise<Record<string, unknown>> {
  counter += 1;
  switch (resource) {
    case 'employee':
      return { firstName: 'New', lastName: `Hire ${counter}`, userId: await newUserId(), organizationId: owner.organizationId };
    case 'organization':
      return { name: `Org ${counter}`, currency: 'EUR' };
    case 'tags':
      return { name: `tag ${counter}`, color: 'red', organizationId: owner.organizationId };
    case 'skill':
      return { name: `skill ${counter}`, organizationId: owner.organizationId };
  }
}

const patchBody = (resource: Resource) => (resource === 'employee' ? { lastName: 'Patched' } : { name: `patched ${resource} ${++counter}` });
const count = async (resource: Resource) => Number((await t.db(TABLES[resource]).count({ n: '*' }))[0].n);

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
  sessions.set('SUPER_ADMIN', owner);
  for (const role of ALL.filter((r) => r !== 'SUPER_ADMIN')) sessions.set(role, await userWithRole(t, owner, role));
  for (const resource of Object.keys(EXPECTED) as Resource[]) {
    const res = await t.http.post(`/api/${resource}`).set(owner.auth).send(await createBody(resource));
    assert.is(res.status, 201, JSON.stringify(res.body));
    existing[resource] = res.body.id;
  }
});
test.after(async () => {
  await t.close();
});

for (const resource of Object.keys(EXPECTED) as Resource[]) {
  const { read, write } = EXPECTED[resource];
  for (const role of ALL) {
    const mayRead = read.includes(role);
    const mayWrite = write.includes(role);

    test(`${role} ${mayRead ? 'reads' : 'cannot read'} ${resource}`, async () => {
      const auth = sessions.get(role)!.auth;
      const list = await t.http.get(`/api/${resource}`).set(auth);
      const one = await t.http.get(`/api/${resource}/${existing[resource]}`).set(auth);
      const search = await t.http.post(`/api/${resource}/search`).set(auth).send({});
      if (mayRead) {
        assert.is(list.status, 200, JSON.stringify(list.body));
        assert.ok(list.body.total >= 1);
        assert.is(one.status, 200, JSON.stringify(one.body));
        assert.is(one.body.id, existing[resource]);
        assert.is(search.status, 200, JSON.stringify(search.body));
      } else {
        assertForbidden(list);
        assertForbidden(one);
        assertForbidden(search);
      }
    });

    test(`${role} ${mayWrite ? 'writes' : 'cannot write'} ${resource}`, async () => {
      const auth = sessions.get(role)!.auth;
      const before = await count(resource);
      const snapshot = await t.db(TABLES[resource]).where({ id: existing[resource] }).first();
      const created = await t.http.post(`/api/${resource}`).set(auth).send(await createBody(resource));
      const patched = await t.http.patch(`/api/${resource}/${existing[resource]}`).set(auth).send(patchBody(resource));
      if (mayWrite) {
        assert.is(created.status, 201, JSON.stringify(created.body));
        assert.is(patched.status, 200, JSON.stringify(patched.body));
        const removed = await t.http.delete(`/api/${resource}/${created.body.id}`).set(auth);
        assert.is(removed.status, 204, JSON.stringify(removed.body));
        assert.is(await count(resource), before);
      } else {
        assertForbidden(created);
        assertForbidden(patched);
        assertForbidden(await t.http.put(`/api/${resource}/${existing[resource]}`).set(auth).send(await createBody(resource)));
        assertForbidden(await t.http.delete(`/api/${resource}/${existing[resource]}`).set(auth));
        assert.is(await count(resource), before, 'a refused create writes nothing');
        assert.equal(await t.db(TABLES[resource]).where({ id: existing[resource] }).first(), snapshot, 'a refused write changes nothing');
      }
    });
  }
}

test('the permission is checked before the body: a refused caller learns nothing from validation', async () => {
  const viewer = sessions.get('VIEWER')!;
  assertForbidden(await t.http.post('/api/employee').set(viewer.auth).send({ nonsense: true }));
  assertForbidden(await t.http.patch('/api/employee/not-a-uuid').set(viewer.auth).send({}));
  const employee = sessions.get('EMPLOYEE')!;
  assertForbidden(await t.http.get('/api/employee/not-a-uuid').set(employee.auth));
});

test('a role change takes effect with the next login, and the token cannot claim another role', async () => {
  const viewer = await userWithRole(t, owner, 'VIEWER');
  assertForbidden(await t.http.post('/api/tags').set(viewer.auth).send(await createBody('tags')));
  const managerRole = await t.db('role').where({ tenantId: owner.tenantId, name: 'MANAGER' }).first();
  await t.db('user').where({ id: viewer.userId }).update({ roleId: managerRole.id });
  const again = await t.http.post('/api/auth/login').send({ email: viewer.email, password: PASSWORD });
  assert.is(again.body.user.role.name, 'MANAGER');
  const created = await t.http.post('/api/tags').set({ Authorization: `Bearer ${again.body.token}` }).send(await createBody('tags'));
  assert.is(created.status, 201, JSON.stringify(created.body));
});

test.run();
