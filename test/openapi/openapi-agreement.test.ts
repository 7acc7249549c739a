// Where /swg-json and the server could disagree, each promise of the document checked against
// what the server does: null only for nullable properties, read-only properties ignored in
// bodies, optional bodies on search and PATCH, 503 when the database is down, the Tenant-Id
// header, the default page size of a resource whose maximum is below 10, and the register
// password's maximum length.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import knex from 'knex';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_PASSWORD_LENGTH } from '../../auth/password.js';
import { signAccessToken, tokenKeys } from '../../auth/tokens.js';
import { createProjectApp as createApp } from '../../app/create-app.js';
import { loadConfig } from '../../engine/config/config.js';
import { knexConfig } from '../../engine/db/database.js';
import { schemaName } from '../../engine/openapi/fragments.js';
import { RESOURCES_DIR } from '../../app/paths.js';
import { DEFAULT_TAKE } from '../../engine/resource/compiled.js';
import { modules } from '../../resources/modules.js';
import { newTenant, PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import { operationsOf } from '../helpers/openapi.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden } from '../helpers/error-envelope.js';

const fixtureDir = fileURLToPath(new URL('../fixtures/list', import.meta.url));
const migrationDir = fileURLToPath(new URL('../fixtures/list-migrations', import.meta.url));

type Tenant = Awaited<ReturnType<typeof newTenant>>;

let t: TestApp;
let doc: Record<string, any>;
let admin: Tenant;
let other: Tenant;

test.before(async () => {
  t = await createTestApp({ resourceDirs: [RESOURCES_DIR, fixtureDir], migrationDirs: [migrationDir] });
  doc = t.openapi as Record<string, any>;
  admin = await newTenant(t, 'Agree Co');
  other = await newTenant(t, 'Other Co');
});
test.after(async () => {
  await t.close();
});

const operations = () => operationsOf(doc);

const schema = (name: string) => doc.components.schemas[name];

/** Whether a value fits a schema of the document (a component by name, or an inline schema). */
function fits(target: string | object, value: unknown): boolean {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const validate = ajv.compile(typeof target === 'string' ? { $ref: `doc#/components/schemas/${target}` } : target);
  return validate(value) as boolean;
}

const row = (table: string, id: string) => t.db(table).where({ id }).first();
const count = async (table: string, tenantId: string) => Number((await t.db(table).where({ tenantId }).count({ n: '*' }))[0].n);

// ---------------------------------------------------------------------------------------------
// 1. null: only where a property is nullable (a defaulted field is not: its column is NOT NULL)

interface DefaultedCase {
  resource: string;
  path: string;
  table: string;
  /** A valid create/replace body (the field under test set away from its default). */
  body: () => Record<string, unknown>;
  field: string;
  fallback: boolean;
  /** A field of the same resource with no default: null is a value there. */
  optional: string;
}

const DEFAULTED: DefaultedCase[] = [
  { resource: 'Tag', path: '/api/tags', table: 'tag', body: () => ({ name: `t-${randomUUID()}`, color: 'red', isSystem: true, organizationId: admin.organizationId }), field: 'isSystem', fallback: false, optional: 'textColor' },
  { resource: 'Organization', path: '/api/organization', table: 'organization', body: () => ({ name: 'Branch', currency: 'EUR', isActive: false }), field: 'isActive', fallback: true, optional: 'timeZone' },
  { resource: 'Organization', path: '/api/organization', table: 'organization', body: () => ({ name: 'Branch', currency: 'EUR', isDefault: true }), field: 'isDefault', fallback: false, optional: 'timeZone' },
];

test('a defaulted field is documented as not nullable in every body, an optional field without default as nullable', () => {
  for (const c of DEFAULTED) {
    for (const kind of ['Create', 'Replace', 'Patch']) {
      const properties = schema(`${c.resource}${kind}`).properties;
      const where = `${c.resource}${kind}.${c.field}`;
      assert.is(properties[c.field].type, 'boolean', where);
      assert.is(properties[c.field].nullable, undefined, where);
      assert.is(properties[c.optional].nullable, true, `${c.resource}${kind}.${c.optional}`);
      assert.not.ok(fits(`${c.resource}${kind}`, { ...c.body(), [c.field]: null }), `${where}: null fits the document`);
    }
    // The record agrees: the field always has a value.
    assert.ok(schema(c.resource).required.includes(c.field));
    assert.is(schema(c.resource).properties[c.field].nullable, undefined);
  }
});

test('the server refuses null for a defaulted field on create, replace and patch, with a validation message', async () => {
  for (const c of DEFAULTED) {
    const message = `${c.field} must be a boolean value`;
    const created = await t.http.post(c.path).set(admin.auth).send(c.body());
    assert.is(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    const before = await row(c.table, id);
    assert.is(before[c.field], !c.fallback, 'set away from its default');
    const rows = await count(c.table, admin.tenantId);

    assertError(await t.http.post(c.path).set(admin.auth).send({ ...c.body(), [c.field]: null }), 400, message);
    assert.is(await count(c.table, admin.tenantId), rows, 'nothing created');
    const put = await t.http.put(`${c.path}/${id}`).set(admin.auth).send({ ...c.body(), [c.field]: null });
    assertError(put, 400, message);
    const patch = await t.http.patch(`${c.path}/${id}`).set(admin.auth).send({ [c.field]: null });
    assertError(patch, 400);
    assert.equal(patch.body.message, [message], 'from validation, not from the database');
    assert.equal(await row(c.table, id), before, 'nothing changed');

    // What the document allows, the server does: null where nullable, and PUT resets to the default.
    const nulled = await t.http.patch(`${c.path}/${id}`).set(admin.auth).send({ [c.optional]: null });
    assert.is(nulled.status, 200, JSON.stringify(nulled.body));
    assert.is((await row(c.table, id))[c.optional], null);
    const { [c.field]: _, ...withoutField } = c.body();
    assert.ok(fits(`${c.resource}Replace`, withoutField));
    const reset = await t.http.put(`${c.path}/${id}`).set(admin.auth).send(withoutField);
    assert.is(reset.status, 200, JSON.stringify(reset.body));
    assert.is(reset.body[c.field], c.fallback);
    assert.is((await row(c.table, id))[c.field], c.fallback, 'PUT reset the absent field to its default');
  }
});

// ---------------------------------------------------------------------------------------------
// 2. Read-only properties in bodies: documented readOnly, and ignored by the server

test('every request body lists the read-only fields as readOnly properties; other unknown properties stay refused', () => {
  for (const resource of t.engine.registry.values()) {
    for (const kind of ['create', 'replace', 'patch'] as const) {
      const body = schema(schemaName(resource, kind));
      assert.ok(body, `${resource.name} ${kind}`);
      assert.is(body.additionalProperties, false);
      for (const field of resource.readOnlyFields) {
        assert.is(body.properties[field]?.readOnly, true, `${resource.name} ${kind}.${field}`);
        assert.not.ok((body.required ?? []).includes(field));
      }
      for (const field of resource.writableFields) assert.not.ok(body.properties[field.name].readOnly, `${resource.name} ${kind}.${field.name}`);
      assert.match(body.properties.tenantId.description, /403/);
    }
  }
  assert.equal(
    Object.keys(schema('TagCreate').properties).filter((k) => schema('TagCreate').properties[k].readOnly).sort(),
    ['createdAt', 'id', 'tenantId', 'updatedAt'],
  );
});

test('id, tenantId (the caller\'s), createdAt and updatedAt in a create, replace or patch body are ignored', async () => {
  const sentId = randomUUID();
  const ignored = { id: sentId, tenantId: admin.tenantId.toUpperCase(), createdAt: '2001-01-01T00:00:00.000Z', updatedAt: '2001-01-01T00:00:00.000Z' };
  const body = { name: `ro-${randomUUID()}`, color: 'blue', organizationId: admin.organizationId, ...ignored };
  assert.ok(fits('TagCreate', body), 'the document accepts the body');
  const created = await t.http.post('/api/tags').set(admin.auth).send(body);
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id;
  assert.is.not(id, sentId);
  assert.is(await row('tag', sentId), undefined, 'no record took the sent id');
  const stored = await row('tag', id);
  assert.is(stored.tenantId, admin.tenantId);
  assert.ok(new Date(stored.createdAt).getUTCFullYear() >= 2026);

  const replaced = await t.http.put(`/api/tags/${id}`).set(admin.auth).send({ ...body, name: 'ro-replaced' });
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.ok(fits('TagPatch', { color: 'green', ...ignored }));
  const patched = await t.http.patch(`/api/tags/${id}`).set(admin.auth).send({ color: 'green', ...ignored });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  const after = await row('tag', id);
  assert.equal([after.id, after.tenantId, after.name, after.color], [id, admin.tenantId, 'ro-replaced', 'green']);
  assert.equal(after.createdAt, stored.createdAt, 'createdAt kept');
  assert.ok(new Date(after.updatedAt).getUTCFullYear() >= 2026, 'updatedAt set by the server');

  // As documented on tenantId: another tenant's is a 403, and nothing changes.
  assertForbidden(await t.http.patch(`/api/tags/${id}`).set(admin.auth).send({ color: 'black', tenantId: other.tenantId }));
  assert.is((await row('tag', id)).color, 'green');
  assertError(await t.http.patch(`/api/tags/${id}`).set(admin.auth).send({ salary: 1 }), 400, 'property salary should not exist');
});

const IGNORED_ON_REGISTER = ['id', 'hash', 'isEmailVerified', 'isActive', 'roleId', 'name', 'createdAt', 'updatedAt'];

test('register: the server-owned fields are readOnly properties at the top level and in user, and the server ignores them', async () => {
  const register = doc.paths['/api/auth/register'].post;
  const body = register.requestBody.content['application/json'].schema;
  for (const level of [body, body.properties.user]) {
    for (const field of IGNORED_ON_REGISTER) assert.is(level.properties[field]?.readOnly, true, field);
    assert.is(level.additionalProperties, false);
  }
  assert.match(register.description, /ignored/);

  const email = uniqueEmail('ro');
  const sentId = randomUUID();
  const owned = { id: sentId, hash: 'not-a-hash', isEmailVerified: true, isActive: false, roleId: randomUUID(), name: 'Mallory', createdAt: '2001-01-01T00:00:00Z', updatedAt: '2001-01-01T00:00:00Z' };
  const sent = { ...owned, user: { ...owned, firstName: 'Rita', lastName: 'Owned', email }, password: PASSWORD, confirmPassword: PASSWORD };
  assert.ok(fits(body, sent), 'the document accepts the body');
  const res = await t.http.post('/api/auth/register').send(sent);
  assert.is(res.status, 201, JSON.stringify(res.body));
  const user = await t.db('user').where({ email }).first();
  assert.is.not(user.id, sentId);
  assert.is(user.isEmailVerified, false);
  assert.is(user.isActive, true);
  assert.is(user.name, 'Rita Owned');
  assert.is.not(user.roleId, owned.roleId);
  assert.is.not(user.hash, 'not-a-hash');
  assert.ok(new Date(user.createdAt).getUTCFullYear() >= 2026);
  const login = await t.http.post('/api/auth/login').send({ email, password: PASSWORD });
  assert.is(login.status, 200, 'the password, not the sent hash, was stored');
  assert.is(login.body.user.role.name, 'SUPER_ADMIN');
});

// ---------------------------------------------------------------------------------------------
// 3. Optional bodies: search and PATCH

test('search and PATCH bodies are optional (create and PUT are not), and the server takes them absent', async () => {
  for (const { path, method, op } of operations()) {
    // Auth bodies are the auth routes' own (register and login need theirs).
    if (!op.requestBody || path.startsWith('/api/auth')) continue;
    // A share link's create body has only an optional expiry.
    const optional = path.endsWith('/search') || (method === 'patch' && !path.endsWith('/bulk')) || path.endsWith('/share-link');
    assert.is(op.requestBody.required, !optional, `${method.toUpperCase()} ${path}`);
  }
  const created = await t.http.post('/api/tags').set(admin.auth).send({ name: `nb-${randomUUID()}`, color: 'teal', textColor: 'white', organizationId: admin.organizationId });
  assert.is(created.status, 201);
  const before = await row('tag', created.body.id);

  const search = await t.http.post('/api/tags/search').set(admin.auth);
  assert.is(search.status, 200, JSON.stringify(search.body));
  assert.is(search.body.total, await count('tag', admin.tenantId));
  assert.ok(search.body.items.some((item: { id: string }) => item.id === created.body.id));
  assert.ok(fits('TagList', search.body));

  const patch = await t.http.patch(`/api/tags/${created.body.id}`).set(admin.auth);
  assert.is(patch.status, 200, JSON.stringify(patch.body));
  const after = await row('tag', created.body.id);
  const { updatedAt: _a, ...kept } = after;
  const { updatedAt: _b, ...was } = before;
  assert.equal(kept, was, 'an absent PATCH body changes no field');
});

// ---------------------------------------------------------------------------------------------
// 4. 503 and the Tenant-Id header

/** A loopback port nothing listens on: taken from the system, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The one operation that never asks the database: liveness must not fail with it. */
const LIVENESS = 'GET /api/health/live';

test('every operation but liveness documents 503, and the server answers it in the envelope when the database is unreachable', async () => {
  for (const { path, method, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    assert.is(Boolean(op.responses['503']), where !== LIVENESS, where);
  }
  assert.equal(doc.paths['/api/tags'].get.responses['503'], { $ref: '#/components/responses/ServiceUnavailable' });

  // The same app, pointed at a PostgreSQL server that is not there. knex's own log is silenced:
  // the refused connections are the point of the test.
  const quiet = { warn() {}, error() {}, debug() {}, deprecate() {} };
  const db = knex({ ...(await knexConfig({ databaseUrl: `postgres://postgres@127.0.0.1:${await closedPort()}/absent` })), log: quiet });
  try {
    const app = createApp({ config: loadConfig(TEST_ENV), db, modules, logError: () => {} });
    const http = request(app.koa.callback());
    const token = signAccessToken(tokenKeys(app.engine.config), { sub: randomUUID(), tenantId: randomUUID(), role: 'SUPER_ADMIN', sid: randomUUID() });
    const auth = { Authorization: `Bearer ${token}` };
    const id = randomUUID();
    const calls = [
      http.get('/api/tags').set(auth),
      http.post('/api/tags/search').set(auth).send({}),
      http.get(`/api/employee/${id}`).set(auth),
      http.post('/api/tags').set(auth).send({ name: 'n', color: 'c' }),
      http.patch(`/api/tags/${id}`).set(auth).send({ color: 'c' }),
      http.delete(`/api/skill/${id}`).set(auth),
      http.get('/api/event-type').set(auth),
      http.post('/api/auth/login').send({ email: 'nobody@example.com', password: PASSWORD }),
      http.post('/api/auth/register').send({ user: { email: uniqueEmail('down') }, password: PASSWORD }),
    ];
    for (const res of await Promise.all(calls)) {
      assertError(res, 503, 'The database is not available');
      assert.ok(fits('ErrorResponse', res.body));
    }
    // Liveness answers all the same: a database outage must not get the process restarted.
    const live = await http.get('/api/health/live');
    assert.is(live.status, 200);
  } finally {
    await db.destroy();
  }
});

const isTenantHeader = (p: { $ref?: string }) => p.$ref === '#/components/parameters/TenantId';

test('the Tenant-Id header: documented on every operation that takes a token, and a foreign one is a 403 there', async () => {
  const header = doc.components.parameters.TenantId;
  // A tenant id, or empty: with a valid token anything but its tenant is a 403 (what is no id can only be refused); empty counts as not sent.
  assert.equal(
    { ...header, description: undefined, schema: { anyOf: header.schema.anyOf } },
    { name: 'Tenant-Id', in: 'header', required: false, description: undefined, schema: { anyOf: [{ type: 'string', format: 'uuid' }, { type: 'string', maxLength: 0 }] } },
  );
  assert.is((await t.http.get('/api/tags').set(admin.auth).set('Tenant-Id', '')).status, 200);
  assert.match(doc.components.securitySchemes.bearer.description, /Tenant-Id/);
  const without: string[] = [];
  for (const { path, method, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    const listed = (op.parameters ?? []).some(isTenantHeader);
    const takesToken = op.security === undefined || op.security.some((s: object) => 'bearer' in s);
    assert.is(listed, takesToken, where);
    if (!listed) {
      without.push(where);
      continue;
    }
    const url = path.replace(/\{[^}]+\}/g, randomUUID());
    const req = t.http[method as 'get'](url).set(admin.auth).set('Tenant-Id', other.tenantId);
    assertForbidden(method === 'get' || method === 'delete' ? await req : await req.send({}));
  }
  // Only routes served without a token go without the header: health, login and the other public ones.
  assert.ok(without.includes('GET /api/health') && without.includes('POST /api/auth/login'), without.join(', '));
  for (const where of without) {
    const path = where.split(' ')[1].replace(/\{[^}]+\}/g, 'x');
    assert.ok(t.isPublic(path), `${where} is documented without a token but the server asks one`);
  }

  // Registration with a token and a foreign header creates nobody; the own tenant's header passes.
  const email = uniqueEmail('hdr');
  const body = { user: { email, firstName: 'H', lastName: 'D' }, password: PASSWORD };
  assertForbidden(await t.http.post('/api/auth/register').set(admin.auth).set('Tenant-Id', other.tenantId).send(body));
  assert.is(await t.db('user').where({ email }).first(), undefined);
  const own = await t.http.post('/api/auth/register').set(admin.auth).set('Tenant-Id', admin.tenantId).send(body);
  assert.is(own.status, 201, JSON.stringify(own.body));
  assert.is((await t.db('user').where({ email }).first()).tenantId, admin.tenantId);
  const list = await t.http.get('/api/tags').set(admin.auth).set('Tenant-Id', admin.tenantId.toUpperCase());
  assert.is(list.status, 200);
});

// ---------------------------------------------------------------------------------------------
// 5. The default page size of a resource whose maximum is below 10

test('take: the documented default is min(10, maxTake), and the server pages that way', async () => {
  for (const resource of t.engine.registry.values()) {
    if (!resource.routes) continue;
    const expected = Math.min(DEFAULT_TAKE, resource.maxTake);
    const take = doc.paths[`/api/${resource.paths[0]}`].get.parameters.find((p: any) => p.name === 'take');
    assert.is(take.schema.default, expected, resource.name);
    assert.match(take.description, new RegExp(`default ${expected}, at most ${resource.maxTake}`));
  }
  const findInput = schema('ListNoteFindInput');
  assert.is(findInput.properties.take.default, 5);
  assert.is(findInput.example.take, 5);
  assert.is(schema('EmployeeFindInput').properties.take.default, 10);

  const titles = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
  for (const title of titles) {
    const res = await t.http.post('/api/list-note').set(admin.auth).send({ title, organizationId: admin.organizationId });
    assert.is(res.status, 201, JSON.stringify(res.body));
  }
  assert.is(await count('list_fixture_note', admin.tenantId), titles.length);
  const list = await t.http.get('/api/list-note').set(admin.auth);
  assert.is(list.status, 200);
  assert.is(list.body.items.length, 5);
  assert.is(list.body.total, titles.length);
  const search = await t.http.post('/api/list-note/search').set(admin.auth).send({});
  assert.is(search.body.items.length, 5);
  const clamped = await t.http.get('/api/list-note?take=10').set(admin.auth);
  assert.is(clamped.body.items.length, 5, 'larger values are clamped to the maximum, as documented');
  const smaller = await t.http.get('/api/list-note?take=3').set(admin.auth);
  assert.is(smaller.body.items.length, 3);
});

// ---------------------------------------------------------------------------------------------
// 6. The register password's maximum length is the password rule's

test("register: the documented password maxLength is the password rule's, and the server agrees", async () => {
  const body = doc.paths['/api/auth/register'].post.requestBody.content['application/json'].schema;
  for (const property of [body.properties.password, body.properties.confirmPassword, body.properties.user.properties.password]) {
    assert.is(property.maxLength, MAX_PASSWORD_LENGTH);
  }
  const longest = `Aa1!${'x'.repeat(MAX_PASSWORD_LENGTH - 4)}`;
  const tooLong = `${longest}x`;
  const refusedEmail = uniqueEmail('long');
  const refused = await t.http.post('/api/auth/register').send({ user: { email: refusedEmail }, password: tooLong });
  assertError(refused, 400, `password must be shorter than or equal to ${MAX_PASSWORD_LENGTH} characters`);
  assert.is(await t.db('user').where({ email: refusedEmail }).first(), undefined);
  const email = uniqueEmail('longest');
  const accepted = await t.http.post('/api/auth/register').send({ user: { email }, password: longest, confirmPassword: longest });
  assert.is(accepted.status, 201, JSON.stringify(accepted.body));
  assert.is((await t.http.post('/api/auth/login').send({ email, password: longest })).status, 200);
});

test.run();
