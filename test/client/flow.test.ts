// A whole flow through the generated client (client/) against the service listening on a port
// of this process: register, sign in, an organization, an employee with tags, a filtered list
// with relations, an update, a delete; then the client's renewal of an expired access token
// (one refresh, however many requests were refused at once) and the end of a revoked session.
// Everything here is typed by client/schema.d.ts: `npx tsc --noEmit` fails on a path, parameter
// or body the document does not have (the @ts-expect-error lines below must stay errors).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { signAccessToken, tokenKeys, type AccessClaims } from '../../auth/tokens.js';
import { createApiClient, type ApiClient, type Tokens } from '../../client/index.js';
import { PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let server: Server;
let baseUrl: string;
let client: ApiClient;
/** Every token pair the client was told of (undefined: the session ended). */
const told: Array<Tokens | undefined> = [];
/** Requests the client sent to the refresh route. */
let renewals = 0;

const state = { organizationId: '', tagIds: [] as string[], userId: '', employeeId: '', employeeEmail: '' };

test.before(async () => {
  t = await createTestApp();
  server = createServer(t.koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = createApiClient({
    baseUrl,
    onTokens: (tokens) => told.push(tokens),
    // The real network; counted, so that the tests can tell how often the client renewed.
    fetch: (request) => {
      if (new URL(request.url).pathname === '/api/auth/refresh-token') renewals += 1;
      return fetch(request);
    },
  });
});

test.after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

test('register a tenant and sign in: the client keeps the tokens', async () => {
  const email = uniqueEmail('client');
  const reg = await client.POST('/api/auth/register', {
    body: { user: { firstName: 'Ada', lastName: 'Lovelace', email }, password: PASSWORD, confirmPassword: PASSWORD },
  });
  assert.is(reg.response.status, 201, JSON.stringify(reg.error));
  assert.is(reg.data?.email, email);

  const wrong = await client.signIn(email, 'Wr0ng!Passw0rd');
  assert.is(wrong.response.status, 401);
  assert.is(client.session.tokens, undefined);

  const login = await client.signIn(email, PASSWORD);
  assert.is(login.response.status, 200, JSON.stringify(login.error));
  assert.is(login.data?.user.email, email);
  assert.equal(client.session.tokens, { token: login.data!.token, refresh_token: login.data!.refresh_token });
  assert.equal(told, [client.session.tokens]);

  const check = await client.GET('/api/auth/check');
  assert.is(check.response.status, 200);
  assert.is(check.data?.userId, login.data!.user.id);
});

test('an organization, two tags and a user to employ', async () => {
  const org = await client.POST('/api/organization', { body: { name: 'Analytical Engines', currency: 'GBP' } });
  assert.is(org.response.status, 201, JSON.stringify(org.error));
  state.organizationId = org.data!.id;

  for (const name of ['backend', 'on-call']) {
    const tag = await client.POST('/api/tags', { body: { name, color: 'teal', organizationId: state.organizationId } });
    assert.is(tag.response.status, 201, JSON.stringify(tag.error));
    assert.is(tag.data?.name, name);
    state.tagIds.push(tag.data!.id);
  }

  // Registering with an admin's token adds a user to the admin's tenant.
  state.employeeEmail = uniqueEmail('grace');
  const user = await client.POST('/api/auth/register', {
    body: { user: { firstName: 'Grace', lastName: 'Hopper', email: state.employeeEmail, role: 'EMPLOYEE' }, password: PASSWORD, confirmPassword: PASSWORD },
  });
  assert.is(user.response.status, 201, JSON.stringify(user.error));
  assert.is(user.data?.tenantId, org.data!.tenantId);
  state.userId = user.data!.id;
});

test('create an employee with tags; a field the document does not have is a type error and a 400', async () => {
  const wrong = await client.POST('/api/employee', {
    // @ts-expect-error: nickname is not a property of EmployeeCreate
    body: { firstName: 'Grace', lastName: 'Hopper', userId: state.userId, nickname: 'Amazing Grace' },
  });
  assert.is(wrong.response.status, 400);
  assert.match(String(wrong.error?.message), 'nickname');

  const created = await client.POST('/api/employee', {
    body: { firstName: 'Grace', lastName: 'Hopper', userId: state.userId, organizationId: state.organizationId, tags: [{ id: state.tagIds[0] }, { id: state.tagIds[1] }] },
  });
  assert.is(created.response.status, 201, JSON.stringify(created.error));
  assert.is(created.data?.firstName, 'Grace');
  assert.is(created.data?.organizationId, state.organizationId);
  state.employeeId = created.data!.id;
});

test('list with filters (where, also on a relation, and tags[]) and relations', async () => {
  const found = await client.GET('/api/employee', {
    params: {
      query: {
        where: { firstName: 'Grace', isActive: true, user: { email: state.employeeEmail } },
        'tags[]': [state.tagIds[1]],
        'relations[]': ['tags', 'user'],
        order: { lastName: 'ASC' },
      },
    },
  });
  assert.is(found.response.status, 200, JSON.stringify(found.error));
  assert.is(found.data?.total, 1);
  const [employee] = found.data!.items;
  assert.is(employee.id, state.employeeId);
  assert.equal(employee.tags?.map((tag) => tag.id).sort(), [...state.tagIds].sort());
  assert.is(employee.user?.email, state.employeeEmail);

  const none = await client.GET('/api/employee', { params: { query: { where: { firstName: 'Ada' } } } });
  assert.is(none.response.status, 200);
  assert.equal(none.data, { items: [], total: 0 });

  // Operators, a list of one, and OR groups, typed by the document.
  const ranged = await client.GET('/api/employee', {
    params: { query: { where: { id: { in: [state.employeeId] }, user: { email: { ilike: '%@%' } }, or: [{ firstName: 'Ada' }, { lastName: { ne: 'Nobody' } }] } } },
  });
  assert.is(ranged.response.status, 200, JSON.stringify(ranged.error));
  assert.equal(ranged.data?.items.map((item) => item.id), [state.employeeId]);
  // @ts-expect-error: isActive is a boolean: it takes eq, ne and isNull, no range
  const refused = await client.GET('/api/employee', { params: { query: { where: { isActive: { gt: true } } } } });
  assert.is(refused.response.status, 400);

  // @ts-expect-error: the path is /api/employee; no /api/employees
  const misspelt = await client.GET('/api/employees');
  assert.is(misspelt.response.status, 404);
});

test('update: the change and the new tags are stored', async () => {
  const patched = await client.PATCH('/api/employee/{id}', {
    params: { path: { id: state.employeeId } },
    body: { lastName: 'Murray Hopper', tags: [{ id: state.tagIds[1] }] },
  });
  assert.is(patched.response.status, 200, JSON.stringify(patched.error));
  assert.is(patched.data?.lastName, 'Murray Hopper');

  const read = await client.GET('/api/employee/{id}', { params: { path: { id: state.employeeId }, query: { 'relations[]': ['tags'] } } });
  assert.is(read.response.status, 200);
  assert.is(read.data?.lastName, 'Murray Hopper');
  assert.equal(read.data?.tags?.map((tag) => tag.id), [state.tagIds[1]]);
});

test('delete: 204, then the employee is gone from reads and lists', async () => {
  const deleted = await client.DELETE('/api/employee/{id}', { params: { path: { id: state.employeeId } } });
  assert.is(deleted.response.status, 204);
  const read = await client.GET('/api/employee/{id}', { params: { path: { id: state.employeeId } } });
  assert.is(read.response.status, 404);
  const list = await client.GET('/api/employee');
  assert.is(list.data?.total, 0);
});

/** The signed-in caller's access token as it would be a minute after it expired. */
function expired(token: string): string {
  const { sub, tenantId, role, employeeId, organizationId, sid } = jwt.decode(token) as AccessClaims;
  return signAccessToken({ ...tokenKeys(t.engine.config), accessSeconds: -60 }, { sub, tenantId, role, employeeId, organizationId, sid });
}

test('an expired access token: requests refused at once share one refresh, then each is sent once more', async () => {
  const before = client.session.tokens!;
  client.session.set({ ...before, token: expired(before.token) });
  const stale = client.session.tokens!.token;
  const bare = await fetch(`${baseUrl}/api/organization`, { headers: { Authorization: `Bearer ${stale}` } });
  assert.is(bare.status, 401, 'the service refuses the expired token');
  renewals = 0;

  const answers = await Promise.all([
    client.GET('/api/organization'),
    client.GET('/api/auth/check'),
    client.POST('/api/tags', { body: { name: 'renewed', color: 'gold', organizationId: state.organizationId } }),
  ]);
  assert.equal(answers.map((a) => a.response.status), [200, 200, 201]);
  assert.is(renewals, 1, 'one refresh for the three refused requests');
  assert.is(answers[0].data?.total, 1);
  const renewed = client.session.tokens!;
  assert.is.not(renewed.token, stale);
  assert.is.not(renewed.refresh_token, before.refresh_token);
  assert.equal(told.at(-1), renewed);
  // The service spends a refresh token on first use and ends the session on a second: the session
  // still being live shows that the client sent the old refresh token exactly once.
  const check = await client.GET('/api/auth/check');
  assert.is(check.response.status, 200);
  assert.is(renewals, 1);
});

test('a revoked session: one refresh is tried and refused, the 401 is answered and the tokens dropped', async () => {
  const out = await client.POST('/api/auth/logout');
  assert.is(out.response.status, 200, JSON.stringify(out.error));
  renewals = 0;

  const refused = await client.GET('/api/organization');
  assert.is(refused.response.status, 401);
  assert.is(refused.error?.statusCode, 401);
  assert.is(renewals, 1);
  assert.is(client.session.tokens, undefined);
  assert.is(told.at(-1), undefined);

  // Without a session, requests go out without a token, and a 401 renews nothing.
  const anonymous = await client.GET('/api/organization');
  assert.is(anonymous.response.status, 401);
  assert.is(renewals, 1);
});

test.run();
