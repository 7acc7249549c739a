// /swg-json: a valid OpenAPI 3.0 document that lists every route the app serves, and whose
// schemas, parameters, errors and security match what the server actually does.
import SwaggerParser from '@apidevtools/swagger-parser';
import type Router from '@koa/router';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, get, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import Koa from 'koa';
import request from 'supertest';
import { docsRoutes, DOCUMENT_PATH } from '../../engine/openapi/docs-routes.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pkg from '../../package.json' with { type: 'json' };
import { newTenant } from '../helpers/accounts.js';
import { operationsOf, servedOperationsOf } from '../helpers/openapi.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let doc: Record<string, any>;
test.before(async () => {
  t = await createTestApp();
  doc = t.openapi as Record<string, any>;
});
test.after(async () => {
  await t.close();
});

const operations = () => operationsOf(doc);

/** The app's one @koa/router, from the dispatch middleware it mounted. */
function routerOf(app: TestApp): Router {
  const dispatch = app.koa.middleware.find((m) => (m as { router?: Router }).router);
  if (!dispatch) throw new Error('no @koa/router in the app');
  return (dispatch as unknown as { router: Router }).router;
}

/** Validates a value against a schema of the document itself (Ajv understands nullable). */
function validatorFor(schemaName: string) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  return ajv.compile({ $ref: `doc#/components/schemas/${schemaName}` });
}

const PUBLIC = ['POST /api/auth/login', 'POST /api/auth/register', 'GET /api/health', 'GET /api/health/live', 'GET /api/health/ready'];

/** Whether the server lets a path through without a token (the app's public paths decide, not this test). */
const servedPublicly = (path: string) => t.isPublic(path.replace(/\{[^}]+\}/g, 'x'));

test('the document is valid OpenAPI 3.0 and is served publicly at /swg-json', async () => {
  // swagger-parser's errors break uvu's reporter (the whole file then fails silently): rethrow as text.
  const problem = await SwaggerParser.validate(structuredClone(doc) as any).then(() => undefined, (err: Error) => err.message);
  assert.is(problem, undefined, problem);
  assert.is(doc.openapi, '3.0.3');
  assert.is(doc.info.version, pkg.version);
  assert.equal(doc.servers, [{ url: '/' }]);
  const res = await t.http.get('/swg-json');
  assert.is(res.status, 200);
  assert.match(res.headers['content-type'], /application\/json/);
  assert.equal(res.body, JSON.parse(JSON.stringify(doc)));
});

/** GET /swg-json with exactly these request headers, its bytes as sent: superagent would unzip them (and sends Accept-Encoding itself). */
async function documentAsSent(headers: Record<string, string>) {
  const server = createServer(t.koa.callback()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return new Promise<{ status?: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const { port } = server.address() as AddressInfo;
    get({ host: '127.0.0.1', port, path: '/swg-json', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  }).finally(() => server.close());
}

test('/swg-json is gzipped for a client that takes gzip, plain for one that does not, the same document either way', async () => {
  const json = JSON.stringify(doc);
  for (const accepted of ['gzip', 'gzip, deflate, br', '*']) {
    const zipped = await documentAsSent({ 'Accept-Encoding': accepted });
    assert.is(zipped.status, 200);
    assert.is(zipped.headers['content-encoding'], 'gzip', `Accept-Encoding: ${accepted}`);
    assert.match(String(zipped.headers.vary), /Accept-Encoding/);
    assert.match(String(zipped.headers['content-type']), /^application\/json; charset=utf-8/);
    assert.ok(zipped.body.length < json.length / 5, `${zipped.body.length} bytes sent for ${json.length}`);
    assert.is(zipped.body.length, Number(zipped.headers['content-length']));
    assert.is(gunzipSync(zipped.body).toString('utf8'), json);
  }
  // No header, identity, gzip refused, or only what the server does not send: the document plain.
  for (const headers of [{} as Record<string, string>, { 'Accept-Encoding': 'identity' }, { 'Accept-Encoding': '' }, { 'Accept-Encoding': 'gzip;q=0' }, { 'Accept-Encoding': 'br' }]) {
    const plain = await documentAsSent(headers);
    assert.is(plain.status, 200);
    assert.is(plain.headers['content-encoding'], undefined, JSON.stringify(headers));
    assert.match(String(plain.headers.vary), /Accept-Encoding/);
    assert.is(plain.body.length, Number(plain.headers['content-length']));
    assert.is(plain.body.toString('utf8'), json);
  }
});

test('/swg-json: a document that could not be written is tried again on the next request, not kept failed', async () => {
  let fails = true;
  const document = {
    toJSON() {
      if (fails) throw new Error('not now');
      return { openapi: '3.0.3' };
    },
  };
  const route = docsRoutes(document as unknown as Record<string, unknown>).find((r) => r.path === DOCUMENT_PATH)!;
  const app = new Koa();
  app.silent = true;
  app.use((ctx, next) => route.handler(ctx, next));
  const http = request(app.callback());
  assert.is((await http.get('/swg-json')).status, 500);
  fails = false;
  const res = await http.get('/swg-json');
  assert.is(res.status, 200);
  assert.equal(res.body, { openapi: '3.0.3' });
});

test('every route of the router is documented with its method (an alias in its path item\'s x-aliases), and nothing else is', () => {
  const routes = new Set<string>();
  for (const layer of routerOf(t).stack) {
    assert.type(layer.path, 'string', 'routes are registered with string paths');
    const koaPath = String(layer.path);
    if (!koaPath.startsWith('/api')) continue; // /swg, /swg-json and the UI assets document nothing
    const path = koaPath.replace(/:(\w+)/g, '{$1}');
    for (const method of layer.methods) if (method !== 'HEAD') routes.add(`${method} ${path}`);
  }
  const documented = new Set(servedOperationsOf(doc).map(({ path, method }) => `${method.toUpperCase()} ${path}`));
  // Left out on purpose: the unknown-report catch-all answers only a 404, and its template would
  // match every report's own path (resources/report/routes.ts says why); the import's template
  // likewise, each resource having its own documented path (resources/export-import/import/route.ts).
  const undocumented = new Set(['GET /api/report/{slug}', 'POST /api/import/{resource}']);
  assert.equal([...routes].filter((r) => !documented.has(r) && !undocumented.has(r)), [], 'routes missing from the document');
  assert.equal([...documented].filter((r) => !routes.has(r)), [], 'documented operations the server does not have');
  for (const required of ['GET /api/employee', 'POST /api/employee/search', 'DELETE /api/employee/{id}', 'GET /api/tag/{id}', ...PUBLIC]) {
    assert.ok(documented.has(required), required);
  }
});

test('operationIds are unique, and every operation is in a group (tag) of its resource or module', () => {
  const ids = operations().map(({ op }) => op.operationId);
  assert.ok(ids.every((id) => typeof id === 'string' && id.length > 0));
  assert.is(new Set(ids).size, ids.length);
  for (const { path, method, op } of operations()) assert.ok(op.tags?.length === 1, `${method.toUpperCase()} ${path} has one tag`);
  assert.equal(doc.paths['/api/employee'].get.tags, ['employee']);
  assert.equal(doc.paths['/api/tags'].get.tags, ['tag']);
});

test('every resource with routes is documented under its path, each alias in its x-aliases, with its own relations[] enum', () => {
  let checked = 0;
  let aliasesChecked = 0;
  for (const resource of t.engine.registry.values()) {
    if (!resource.routes) continue;
    const allowed = [...resource.relationPaths].sort();
    const [canonical, ...aliases] = resource.paths;
    const subs: Array<[string, string]> = [['', 'get'], ['', 'post'], ['/search', 'post'], ['/{id}', 'get'], ['/{id}', 'put'], ['/{id}', 'patch'], ['/{id}', 'delete']];
    for (const [sub, method] of subs) {
      const template = `/api/${canonical}${sub}`;
      assert.ok(doc.paths[template]?.[method], `${method.toUpperCase()} ${template} (${resource.name}) is documented`);
      for (const alias of aliases) assert.ok(doc.paths[template]['x-aliases']?.includes(`/api/${alias}${sub}`), `${template} lists /api/${alias}${sub} in x-aliases`);
    }
    for (const template of [`/api/${canonical}`, `/api/${canonical}/{id}`]) {
      const param = doc.paths[template].get.parameters.find((p: any) => p.name === 'relations[]');
      if (allowed.length) assert.equal([...param.schema.items.enum].sort(), allowed, `${template} relations[]`);
      else assert.ok(!param || !param.schema.items.enum?.length, `${template} takes no relations`);
    }
    checked++;
    aliasesChecked += aliases.length;
  }
  assert.ok(checked >= 20, `${checked} resources checked`);
  assert.ok(aliasesChecked >= 5, `${aliasesChecked} aliases checked`);
});

test("relations[] is an enum of exactly the employee's allowed relation paths, and the server agrees", async () => {
  const allowed = [...t.engine.registry.get('employee')!.relationPaths].sort();
  for (const op of [doc.paths['/api/employee'].get, doc.paths['/api/employee/{id}'].get]) {
    const param = op.parameters.find((p: any) => p.name === 'relations[]');
    assert.is(param.in, 'query');
    assert.equal([...param.schema.items.enum].sort(), allowed);
  }
  assert.ok(allowed.includes('user') && allowed.includes('tags') && allowed.includes('user.role'));
  assert.equal([...doc.components.schemas.EmployeeFindInput.properties.relations.anyOf[0].items.enum].sort(), allowed);

  const admin = await newTenant(t);
  const everything = allowed.map((r) => `relations[]=${encodeURIComponent(r)}`).join('&');
  const ok = await t.http.get(`/api/employee?${everything}`).set(admin.auth);
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  const refused = await t.http.get('/api/employee?relations[]=salary').set(admin.auth);
  assert.is(refused.status, 400);
  assert.ok(!allowed.includes('salary'));
});

/** A parameter, with a $ref to components/parameters resolved. */
const parameter = (p: any) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p);

test('list parameters: defaults and max take described, search/dates/tags only where supported', () => {
  const names = (path: string) => doc.paths[path].get.parameters.map((p: any) => parameter(p).name);
  const employee = doc.paths['/api/employee'].get.parameters;
  const take = employee.find((p: any) => p.name === 'take');
  assert.is(take.schema.default, 10);
  assert.match(take.description, /at most 50/);
  assert.equal(names('/api/employee'), ['take', 'skip', 'order', 'where', 'relations[]', 'select[]', 'cursor', 'count', 'Prefer', 'search', 'startDate', 'endDate', 'tags[]', 'If-None-Match', 'Tenant-Id', 'tenantId']);
  assert.equal(names('/api/skill'), ['take', 'skip', 'order', 'where', 'relations[]', 'select[]', 'cursor', 'count', 'Prefer', 'search', 'If-None-Match', 'Tenant-Id', 'tenantId']);
  const where = employee.find((p: any) => p.name === 'where');
  assert.is(where.style, 'deepObject');
  // where= alone (an empty where, as some clients write {}) is no condition.
  assert.equal(where.schema, { anyOf: [{ $ref: '#/components/schemas/EmployeeWhere' }, { type: 'string', maxLength: 0, description: 'where= names no condition' }] });
  const schemas = doc.components.schemas;
  const whereSchema = schemas.EmployeeWhere;
  assert.ok(whereSchema.properties.isActive && whereSchema.properties.user.allOf[0].$ref === '#/components/schemas/UserFieldFilters');
  assert.ok(schemas.UserFieldFilters.properties.id);
  // Each filter: its value, or an object of exactly the operators it allows.
  const [, operators] = whereSchema.properties.isActive.anyOf;
  assert.equal(Object.keys(operators.properties), ['eq', 'ne', 'isNull']);
  assert.equal(Object.keys(whereSchema.properties.billRateValue.anyOf[1].properties), ['eq', 'ne', 'in', 'nin', 'lt', 'lte', 'gt', 'gte', 'between', 'isNull']);
  assert.equal(whereSchema.properties.or.items, { $ref: '#/components/schemas/EmployeeWhereGroup' });
  assert.is(schemas.EmployeeWhereGroup.properties.or, undefined);
});

test('request schemas match what the server enforces (EmployeeCreate)', async () => {
  const create = doc.components.schemas.EmployeeCreate;
  assert.equal(doc.paths['/api/employee'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/EmployeeCreate' });
  for (const field of ['firstName', 'lastName', 'userId']) assert.ok(create.required.includes(field), field);
  assert.is(create.additionalProperties, false);

  const admin = await newTenant(t, 'Schema Co');
  const count = async () => Number((await t.db('employee').where({ tenantId: admin.tenantId }).count({ n: '*' }))[0].n);
  const valid = { firstName: 'Ann', lastName: 'Lee', userId: admin.userId };
  for (const field of create.required as string[]) {
    const body: Record<string, unknown> = { ...valid };
    delete body[field];
    const res = await t.http.post('/api/employee').set(admin.auth).send(body);
    assert.is(res.status, 400, field);
    assert.ok(res.body.message.includes(`${field} should not be empty`), JSON.stringify(res.body));
  }
  const tooLong = 'x'.repeat(create.properties.firstName.maxLength + 1);
  const long = await t.http.post('/api/employee').set(admin.auth).send({ ...valid, firstName: tooLong });
  assert.is(long.status, 400);
  const unknown = await t.http.post('/api/employee').set(admin.auth).send({ ...valid, salary: 1 });
  assert.is(unknown.status, 400);
  assert.equal(unknown.body.message, ['property salary should not exist']);
  const badEnum = await t.http.post('/api/employee').set(admin.auth).send({ ...valid, payPeriod: 'YEARLY' });
  assert.is(badEnum.status, 400);
  assert.ok(!create.properties.payPeriod.enum.includes('YEARLY'));
  assert.is(await count(), 0);

  const created = await t.http.post('/api/employee').set(admin.auth).send({ ...valid, startedWorkOn: '2026-01-05', payPeriod: 'WEEKLY' });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is(await count(), 1);
  const asRecord = validatorFor('Employee');
  assert.ok(asRecord(created.body), JSON.stringify(asRecord.errors));
  const allowed = [...t.engine.registry.get('employee')!.relationPaths].map((r) => `relations[]=${r}`).join('&');
  const list = await t.http.get(`/api/employee?${allowed}`).set(admin.auth);
  assert.is(list.status, 200);
  assert.ok(list.body.items[0].user.role.name, 'nested relations were loaded');
  const asList = validatorFor('EmployeeList');
  assert.ok(asList(list.body), JSON.stringify(asList.errors));
});

test('register and login document the bodies their routes validate', async () => {
  const register = doc.paths['/api/auth/register'].post;
  const schema = register.requestBody.content['application/json'].schema;
  assert.equal(schema.required, ['user']);
  assert.equal(schema.properties.user.required, ['email']);
  assert.equal(Object.keys(register.responses).sort(), ['201', '400', '401', '403', '409', '413', '415', '429', '500', '503']);
  const res = await t.http.post('/api/auth/register').send({ password: 'Str0ng!Passw0rd' });
  assert.is(res.status, 400);
  assert.ok(res.body.message.includes('user should not be empty'), JSON.stringify(res.body));
  const login = doc.paths['/api/auth/login'].post;
  assert.equal(login.requestBody.content['application/json'].schema.required, ['email', 'password']);
  assert.equal(login.responses['200'].content['application/json'].schema.required, ['user', 'token', 'refresh_token']);
});

test('error responses: the envelope component, and the statuses each kind of operation can answer', async () => {
  const envelope = doc.components.schemas.ErrorResponse;
  assert.equal(envelope.required, ['statusCode', 'message', 'error']);
  for (const { path, method, op } of operations()) {
    const statuses = Object.keys(op.responses);
    const where = `${method.toUpperCase()} ${path}`;
    if (!servedPublicly(path)) assert.ok(statuses.includes('401'), `${where} has no 401`);
    // A Tenant-Id header naming another tenant is a 403 wherever a token is needed (the report catalogue lacked it).
    if (!servedPublicly(path)) assert.ok(statuses.includes('403'), `${where} has no 403`);
    // The JSON body parser reads every POST, PUT and PATCH body, also where a route takes none (email resend lacked these).
    if (op.requestBody || ['post', 'put', 'patch'].includes(method)) for (const s of ['400', '413', '415']) assert.ok(statuses.includes(s), `${where} has no ${s}`);
    if (path.endsWith('{id}')) assert.ok(statuses.includes('404'), `${where} has no 404`);
    // Every operation reads or writes the database (health reports it down in its own shape), but
    // liveness, which never asks it.
    if (where !== 'GET /api/health/live') assert.ok(statuses.includes('503'), `${where} has no 503`);
    for (const response of Object.values<any>(op.responses)) {
      if (response.$ref) assert.ok(doc.components.responses[response.$ref.split('/').pop()], response.$ref);
    }
  }
  assert.equal(doc.components.responses.BadRequest.content['application/json'].schema, { $ref: '#/components/schemas/ErrorResponse' });
  // What the server sends on 400 and 401 fits the documented envelope.
  const isEnvelope = validatorFor('ErrorResponse');
  const bad = await t.http.post('/api/auth/login').send({});
  const unauthorized = await t.http.get('/api/employee');
  assert.is(bad.status, 400);
  assert.is(unauthorized.status, 401);
  assert.ok(isEnvelope(bad.body) && isEnvelope(unauthorized.body), JSON.stringify(isEnvelope.errors));
  // The two answers the fuzzer found undocumented: a body that is not JSON on a route that takes
  // none, and another tenant in Tenant-Id on the report catalogue.
  const owner = await newTenant(t, 'Statuses');
  const malformed = await t.http.post('/api/auth/email/verify/resend-verification-code').set(owner.auth).set('content-type', 'application/json').send('{"a":');
  assert.is(malformed.status, 400, JSON.stringify(malformed.body));
  const foreign = await t.http.get('/api/report').set(owner.auth).set('tenant-id', randomUUID());
  assert.is(foreign.status, 403, JSON.stringify(foreign.body));
});

test('bearer security: global, lifted only on public operations; the server asks a token exactly there', async () => {
  assert.equal(doc.security, [{ bearer: [] }]);
  const { description, ...scheme } = doc.components.securitySchemes.bearer;
  assert.equal(scheme, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  assert.match(description, /POST \/api\/auth\/login/);
  assert.match(description, /Tenant-Id header.*403/);
  for (const { path, method, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    // security: [] (no token) or [{}, {bearer: []}] (token optional) lifts the global requirement.
    const isPublic = Array.isArray(op.security) && (op.security.length === 0 || op.security.some((s: object) => Object.keys(s).length === 0));
    assert.is(isPublic, servedPublicly(path), `${where} security`);
    const url = path.replace(/\{[^}]+\}/g, randomUUID());
    const req = t.http[method as 'get'](url);
    const res = method === 'get' || method === 'delete' ? await req : await req.send({});
    if (isPublic) assert.is.not(res.status, 401, where);
    else assert.is(res.status, 401, `${where} without a token`);
  }
});

test.run();
